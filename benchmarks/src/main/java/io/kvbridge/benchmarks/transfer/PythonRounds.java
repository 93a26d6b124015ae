package io.kvbridge.benchmarks.transfer;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Rounds of the same READ through NIXL's Python binding, run on request between a benchmark's own
 * iterations, so that both sides are measured in alternation (A, B, A, B) and meet the same load: a
 * long-lived {@code nixl_read_bench.py --serve} process runs one round per request (its agents
 * exist only during its round) and answers the time per request. Rounds after measurement
 * iterations are appended to a JSON-lines file.
 *
 * <p>Configured by system properties: {@value #PYTHON} (the interpreter, e.g. the venv {@code
 * benchmarks/run.sh} builds), {@value #SCRIPT} (the script) and {@value #OUT} (the JSON-lines
 * file); absent any of them, there is nothing to interleave.
 *
 * <p>Threads: confined to one benchmark thread.
 */
public final class PythonRounds implements AutoCloseable {

  /** The Python interpreter with the NIXL binding. */
  public static final String PYTHON = "kvbridge.bench.python";

  /** The path of {@code nixl_read_bench.py}. */
  public static final String SCRIPT = "kvbridge.bench.python-script";

  /** The JSON-lines file measurement rounds are appended to. */
  public static final String OUT = "kvbridge.bench.python-rounds";

  /** The untimed warm-up of every round: creating agents and connecting them. */
  public static final Duration WARMUP = Duration.ofMillis(200);

  private final Process process;
  private final Writer commands;
  private final BufferedReader answers;
  private final Path out;
  private final String benchmark;

  private PythonRounds(Process process, Path out, String benchmark) {
    this.process = process;
    this.commands = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    this.answers =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    this.out = out;
    this.benchmark = benchmark;
  }

  /**
   * Starts the Python side if the system properties name it; {@code benchmark} labels its rounds.
   *
   * @throws UncheckedIOException if the process cannot start or does not greet
   */
  public static Optional<PythonRounds> fromSystemProperties(String benchmark) {
    String python = System.getProperty(PYTHON, "");
    String script = System.getProperty(SCRIPT, "");
    String out = System.getProperty(OUT, "");
    if (python.isEmpty() || script.isEmpty() || out.isEmpty()) {
      return Optional.empty();
    }
    try {
      Process process =
          new ProcessBuilder(List.of(python, script, "--serve"))
              .redirectError(ProcessBuilder.Redirect.DISCARD)
              .start();
      PythonRounds rounds = new PythonRounds(process, Path.of(out), benchmark);
      rounds.answer(); // the greeting: the binding is loaded
      return Optional.of(rounds);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + python + " " + script + " --serve", e);
    }
  }

  /**
   * Runs one round of {@code shape} for {@code length} and, if {@code record}, appends its answer,
   * labelled with {@code round}, to the rounds file.
   *
   * @throws IllegalStateException if the Python side reports an error
   */
  public void run(String shape, String mode, Duration length, int round, boolean record) {
    String command =
        String.format(
            Locale.ROOT,
            "{\"shape\": \"%s\", \"mode\": \"%s\", \"seconds\": %.3f, \"warmup_seconds\": %.3f}%n",
            shape,
            mode,
            length.toNanos() / 1e9,
            WARMUP.toNanos() / 1e9);
    try {
      commands.write(command);
      commands.flush();
      String answer = answer();
      if (answer.contains("\"error\"")) {
        throw new IllegalStateException("the Python round of " + shape + " failed: " + answer);
      }
      if (record) {
        String labelled =
            "{\"benchmark\": \""
                + benchmark
                + "\", \"round\": "
                + round
                + ", "
                + answer.substring(1);
        Files.writeString(
            out,
            labelled + System.lineSeparator(),
            StandardCharsets.UTF_8,
            StandardOpenOption.CREATE,
            StandardOpenOption.APPEND);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("the Python round of " + shape + " failed", e);
    }
  }

  @Override
  public void close() {
    try {
      commands.close();
      process.waitFor();
    } catch (IOException e) {
      process.destroy();
    } catch (InterruptedException e) {
      process.destroy();
      Thread.currentThread().interrupt();
    }
  }

  /** The next JSON line the Python side prints; other lines (library logs) are skipped. */
  private String answer() throws IOException {
    String line;
    while ((line = answers.readLine()) != null) {
      if (line.startsWith("{")) {
        return line;
      }
    }
    throw new IOException("the Python side ended without answering");
  }
}
