package io.kvbridge.sample.deployment;

import io.kvbridge.sample.SampleApplication;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.web.client.RestClient;

/**
 * One node of a multi-process deployment: a child JVM running the sample app with one profile
 * ({@code prefill} or {@code decode}) on a fixed HTTP port, with short leases, which can be stopped
 * (gracefully or by kill -9) and started again on the same port. Each start writes its own log
 * under the work directory, named for the profile and the start.
 *
 * <p>Used from the test's thread only.
 */
final class ChildNode {

  static final ParameterizedTypeReference<Map<String, Object>> JSON =
      new ParameterizedTypeReference<>() {};

  /**
   * The lease duration every child JVM runs with: short, so that the tests see leases expire, but
   * long enough that a request the loaded build machine takes seconds to route from P to D still
   * finds its lease (heartbeats keep it only once D has the request).
   */
  static final Duration LEASE_DURATION = Duration.ofSeconds(4);

  /** How long a node may take to answer UP after its JVM started. */
  static final Duration START_TIMEOUT = Duration.ofSeconds(90);

  private static final int LOG_TAIL_LINES = 80;

  private final String profile;
  private final int port;
  private final Path work;
  private Process process;
  private int starts;

  ChildNode(String profile, int port, Path work) {
    this.profile = profile;
    this.port = port;
    this.work = work;
  }

  /** Starts the node's JVM with the common settings and {@code arguments}. */
  void start(List<String> arguments) throws IOException {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    starts++;
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
                "--kvbridge.lease.duration=" + LEASE_DURATION.toMillis() + "ms",
                "--kvbridge.lease.sweep-interval=100ms",
                "--kvbridge.lease.heartbeat-interval=500ms",
                "--kvbridge.lease.safety-margin=300ms",
                "--management.endpoint.health.show-details=never"));
    command.addAll(arguments);
    process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(log().toFile())
            .start();
  }

  /**
   * Stops the node's JVM and waits until it exited: {@code forcibly} is kill -9 ({@link
   * Process#destroyForcibly}), otherwise SIGTERM ({@link Process#destroy}), which lets it shut
   * down.
   */
  void stop(boolean forcibly) throws InterruptedException {
    if (forcibly) {
      process.destroyForcibly();
    } else {
      process.destroy();
    }
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }

  /** Stops the node if it runs, gracefully first. */
  void close() throws InterruptedException {
    if (process != null && process.isAlive()) {
      stop(false);
    }
  }

  /**
   * Waits until the node answers UP on {@code /actuator/health}. Fails at once if its JVM exits,
   * and after {@link #START_TIMEOUT} if it never answers UP, each time with the last answer and the
   * tail of the node's log, so that a failure on a build machine says why.
   */
  void awaitHealthy() throws InterruptedException {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    String lastAnswer = "none";
    while (true) {
      if (!process.isAlive()) {
        throw new AssertionError(
            profile
                + " node on port "
                + port
                + " exited ("
                + process.exitValue()
                + "):\n"
                + logTail());
      }
      try {
        Map<String, Object> body =
            RestClient.create(url()).get().uri("/actuator/health").retrieve().body(JSON);
        if (body != null && "UP".equals(body.get("status"))) {
          return;
        }
        lastAnswer = String.valueOf(body);
      } catch (RuntimeException notYet) {
        lastAnswer = notYet.toString();
      }
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError(
            profile
                + " node on port "
                + port
                + " not UP within "
                + START_TIMEOUT.toSeconds()
                + " s; last answer: "
                + lastAnswer
                + "\n"
                + logTail());
      }
      Thread.sleep(250);
    }
  }

  /** The last lines of the node's latest log. */
  private String logTail() {
    try {
      List<String> lines = Files.readAllLines(log());
      return String.join(
          "\n", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()));
    } catch (IOException | java.io.UncheckedIOException unreadable) {
      return "(log " + log() + " unreadable: " + unreadable + ")";
    }
  }

  /** The node's one connector, as {@code /actuator/kvbridge} shows it. */
  @SuppressWarnings("unchecked")
  Map<String, Object> connectorStatus() {
    Map<String, Object> body =
        RestClient.create(url()).get().uri("/actuator/kvbridge").retrieve().body(JSON);
    return ((List<Map<String, Object>>) body.get("connectors")).get(0);
  }

  /** The producer part of the node's connector status. */
  @SuppressWarnings("unchecked")
  Map<String, Object> producerStatus() {
    return (Map<String, Object>) connectorStatus().get("producer");
  }

  /** The consumer part of the node's connector status. */
  @SuppressWarnings("unchecked")
  Map<String, Object> consumerStatus() {
    return (Map<String, Object>) connectorStatus().get("consumer");
  }

  String url() {
    return "http://127.0.0.1:" + port;
  }

  /** The log of the node's latest start. */
  Path log() {
    return work.resolve(profile + "-" + starts + ".log");
  }

  static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
