package io.kvbridge.sample.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.sample.SampleApplication;
import io.kvbridge.sample.engine.ToyModel;
import io.kvbridge.sample.router.DroppedAfterPrefillException;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.web.client.RestClient;

/**
 * The profiles {@code prefill}, {@code decode} and {@code router} as a real multi-process
 * deployment: P and D run as child JVMs that handshake over TCP and move KV through a connector
 * that spans processes (chosen by the subclass); the router runs in this JVM and drops a share of
 * requests after prefill, whose leases must then expire on P.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class MultiProcessDeployment {

  private static final ParameterizedTypeReference<Map<String, Object>> JSON =
      new ParameterizedTypeReference<>() {};
  private static final int REQUESTS = 12;

  private Path work;

  private final List<Process> nodes = new ArrayList<>();
  private ConfigurableApplicationContext router;
  private int prefillPort;
  private final List<Answer> answers = new ArrayList<>();

  /** The connector settings both nodes get, as command-line arguments. */
  abstract List<String> connectorArguments(Path work) throws IOException;

  @BeforeAll
  void deployAndSendTraffic(@TempDir Path workDir) throws Exception {
    work = workDir;
    List<String> connector = connectorArguments(work);
    prefillPort = freePort();
    int decodePort = freePort();
    nodes.add(launch("prefill", prefillPort, connector));
    nodes.add(launch("decode", decodePort, connector));
    router =
        new SpringApplicationBuilder(SampleApplication.class)
            .profiles("router")
            .run(
                "--server.port=0",
                "--kvbridge.sample.router.prefill-urls=http://127.0.0.1:" + prefillPort,
                "--kvbridge.sample.router.decode-urls=http://127.0.0.1:" + decodePort,
                "--kvbridge.sample.router.drop-after-prefill=0.25");
    awaitHealthy(prefillPort, 0);
    awaitHealthy(decodePort, 1);
    String routerUrl =
        "http://127.0.0.1:" + router.getEnvironment().getProperty("local.server.port");
    // The router probed the nodes while they started: it sends requests once it sees them UP.
    awaitRouterSeesEveryNodeHealthy(routerUrl);
    for (int i = 0; i < REQUESTS; i++) {
      String prompt = ("request " + i + " crosses a process boundary; ").repeat(1 + i % 4);
      answers.add(new Answer(prompt, 6, post(routerUrl + "/v1/completions", prompt, 6)));
    }
  }

  @AfterAll
  void stop() throws InterruptedException {
    if (router != null) {
      router.close();
    }
    for (Process node : nodes) {
      node.destroy();
    }
    for (Process node : nodes) {
      if (!node.waitFor(20, TimeUnit.SECONDS)) {
        node.destroyForcibly();
      }
    }
  }

  @Test
  void everyServedCompletionMatchesTheColocatedReference() {
    ToyModel reference = ToyModel.standard();
    List<Answer> served = answers.stream().filter(a -> a.status() == 200).toList();

    assertThat(served).hasSize(REQUESTS - dropped());
    for (Answer a : served) {
      assertThat(text(a.body()))
          .isEqualTo(reference.referenceCompletion(a.prompt(), a.maxTokens()));
      assertThat(a.body().get("kvbridge")).asString().contains("kv_source=LOADED");
    }
  }

  @Test
  void theRouterDropsItsShareAfterPrefill() {
    assertThat(dropped()).isEqualTo(3);
  }

  @Test
  void theDroppedLeasesExpireOnThePrefillProcessAndNothingStaysHeld() {
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              Map<String, Object> status = prefillProducerStatus();
              assertThat(status.get("liveLeases")).isEqualTo(0);
              assertThat(status.get("leasesEnded"))
                  .isEqualTo(
                      Map.of(
                          "READ",
                          REQUESTS - dropped(),
                          "EXPIRED",
                          dropped(),
                          "REVOKED",
                          0,
                          "RELEASED",
                          0));
            });
  }

  private int dropped() {
    return (int)
        answers.stream()
            .filter(a -> a.status() == 503)
            .filter(a -> a.body().toString().contains(DroppedAfterPrefillException.TYPE))
            .count();
  }

  /** The producer part of the prefill process's connector status. */
  @SuppressWarnings("unchecked")
  private Map<String, Object> prefillProducerStatus() {
    Map<String, Object> body =
        RestClient.create("http://127.0.0.1:" + prefillPort)
            .get()
            .uri("/actuator/kvbridge")
            .retrieve()
            .body(JSON);
    Map<String, Object> connector = ((List<Map<String, Object>>) body.get("connectors")).get(0);
    return (Map<String, Object>) connector.get("producer");
  }

  private Process launch(String profile, int port, List<String> connector) throws IOException {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Path log = work.resolve(profile + ".log");
    List<String> command =
        new ArrayList<>(
            List.of(
                java.toString(),
                "-XX:TieredStopAtLevel=1",
                "-cp",
                System.getProperty("java.class.path"),
                SampleApplication.class.getName(),
                "--spring.profiles.active=" + profile,
                "--server.port=" + port,
                "--kvbridge.lease.duration=2s",
                "--kvbridge.lease.sweep-interval=100ms",
                "--kvbridge.lease.heartbeat-interval=500ms",
                "--kvbridge.lease.safety-margin=300ms",
                "--management.endpoint.health.show-details=never"));
    command.addAll(connector);
    return new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(log.toFile())
        .start();
  }

  private void awaitHealthy(int port, int node) {
    await()
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(250))
        .ignoreExceptions()
        .until(
            () -> {
              if (!nodes.get(node).isAlive()) {
                throw new AssertionError(
                    "node on port " + port + " exited: " + Files.readString(logOf(node)));
              }
              return "UP"
                  .equals(
                      RestClient.create("http://127.0.0.1:" + port)
                          .get()
                          .uri("/actuator/health")
                          .retrieve()
                          .body(JSON)
                          .get("status"));
            });
  }

  @SuppressWarnings("unchecked")
  private static void awaitRouterSeesEveryNodeHealthy(String routerUrl) {
    await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(250))
        .untilAsserted(
            () -> {
              Map<String, Object> router =
                  (Map<String, Object>)
                      RestClient.create(routerUrl)
                          .get()
                          .uri("/actuator/info")
                          .retrieve()
                          .body(JSON)
                          .get("kvbridgeRouter");
              for (String pool : List.of("prefill", "decode")) {
                assertThat((List<Map<String, Object>>) router.get(pool))
                    .as("the router's %s nodes", pool)
                    .allSatisfy(node -> assertThat(node).containsEntry("healthy", true));
              }
            });
  }

  private Path logOf(int node) {
    return work.resolve((node == 0 ? "prefill" : "decode") + ".log");
  }

  private static Map<String, Object> post(String url, String prompt, int maxTokens) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("prompt", prompt);
    body.put("max_tokens", maxTokens);
    return RestClient.create()
        .post()
        .uri(url)
        .header("Content-Type", "application/json")
        .body(body)
        .exchange(
            (req, response) -> {
              Map<String, Object> answer = new LinkedHashMap<>(response.bodyTo(JSON));
              answer.put("_status", response.getStatusCode().value());
              return answer;
            });
  }

  @SuppressWarnings("unchecked")
  private static String text(Map<String, Object> body) {
    return (String) ((List<Map<String, Object>>) body.get("choices")).get(0).get("text");
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  private record Answer(String prompt, int maxTokens, Map<String, Object> body) {
    int status() {
      return (Integer) body.get("_status");
    }
  }
}
