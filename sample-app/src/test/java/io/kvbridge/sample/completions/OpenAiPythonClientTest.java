package io.kvbridge.sample.completions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.kvbridge.sample.AllInOneServer;
import io.kvbridge.sample.engine.ToyModel;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * OpenAI's own Python client, {@code openai} {@value #OPENAI_VERSION}, against the router: it lists
 * the models, and asks for a completion and a chat, each whole and streamed, and gets the colocated
 * reference every time.
 *
 * <p>The client is installed with pip into a virtual environment under {@code target/} (reused
 * while its version matches). Where it cannot be obtained (no {@code python3}, no package index),
 * the test is skipped saying why; with {@code CI=true} it fails instead, so that a CI build cannot
 * pass without it.
 */
@AllInOneServer
class OpenAiPythonClientTest {

  private static final String OPENAI_VERSION = "1.109.1";
  private static final Path VENV = Path.of("target", "openai-client");
  private static final Path PYTHON = VENV.resolve("bin").resolve("python");
  private static final String PROMPT = "What does the official client make of the toy model?";
  private static final String USER = "Tell me where the KV cache goes.";
  private static final int MAX_TOKENS = 5;

  @LocalServerPort int port;

  @BeforeAll
  static void installTheClient() throws IOException, InterruptedException {
    if (run(List.of(PYTHON.toString(), "-c", versionCheck()), 60).exitCode() == 0) {
      return;
    }
    List<List<String>> steps =
        List.of(
            List.of("python3", "-m", "venv", "--clear", VENV.toString()),
            List.of(
                PYTHON.toString(),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "openai==" + OPENAI_VERSION));
    for (List<String> step : steps) {
      Result result = run(step, 300);
      if (result.exitCode() != 0) {
        String reason =
            "the openai Python client cannot be obtained: "
                + String.join(" ", step)
                + " exited with "
                + result.exitCode()
                + ": "
                + result.output().strip();
        if ("true".equals(System.getenv("CI"))) {
          fail(reason);
        }
        System.out.println("skipping OpenAiPythonClientTest: " + reason);
        Assumptions.abort(reason);
      }
    }
  }

  @Test
  void theOfficialClientGetsTheReferenceWholeAndStreamedForCompletionsAndChats()
      throws IOException, InterruptedException {
    Path script = Path.of("src", "test", "resources", "openai-client", "check.py");

    Result result =
        run(
            List.of(
                PYTHON.toString(),
                script.toString(),
                "http://127.0.0.1:" + port + "/v1",
                PROMPT,
                String.valueOf(MAX_TOKENS),
                USER),
            120);

    assertThat(result.exitCode()).as(result.output()).isZero();
    String last = result.output().strip().lines().reduce((a, b) -> b).orElse("");
    Map<String, Object> got =
        JsonMapper.shared().readValue(last, new TypeReference<Map<String, Object>>() {});
    String completion = ToyModel.standard().referenceCompletion(PROMPT, MAX_TOKENS);
    String chat =
        ToyModel.standard()
            .referenceCompletion(
                ChatTemplate.prompt(List.of(new ChatMessage("user", USER))), MAX_TOKENS);
    assertThat(got)
        .containsEntry("openai_version", OPENAI_VERSION)
        .containsEntry("models", List.of(ToyModel.NAME))
        .containsEntry("completion", completion)
        .containsEntry("stream", completion)
        .containsEntry("stream_usage_completion_tokens", MAX_TOKENS)
        .containsEntry("stream_finish_reason", "length")
        .containsEntry("chat", chat)
        .containsEntry("chat_role", "assistant")
        .containsEntry("chat_stream", chat)
        .containsEntry("chat_stream_role", "assistant")
        .containsEntry("chat_stream_finish_reason", "length");
  }

  private static String versionCheck() {
    return "import openai, sys; sys.exit(0 if openai.__version__ == '"
        + OPENAI_VERSION
        + "' else 1)";
  }

  private static Result run(List<String> command, long timeoutSeconds)
      throws IOException, InterruptedException {
    Path output = Files.createTempFile("openai-client", ".log");
    try {
      Process process;
      try {
        // To a file, not a pipe: a process that fills a pipe nobody reads would never end.
        process =
            new ProcessBuilder(new ArrayList<>(command))
                .redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .start();
      } catch (IOException e) {
        // Not installed: reported like any other failure to run.
        return new Result(127, String.valueOf(e.getMessage()));
      }
      if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
        return new Result(124, "timed out after " + timeoutSeconds + " s");
      }
      return new Result(process.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(output);
    }
  }

  private record Result(int exitCode, String output) {}
}
