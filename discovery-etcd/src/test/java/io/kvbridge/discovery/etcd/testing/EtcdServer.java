package io.kvbridge.discovery.etcd.testing;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * A real etcd server for tests: one member on loopback, on free ports, with its own data directory,
 * started from the binary the build obtained ({@code kvbridge.etcd.binary}, written by {@code
 * discovery-etcd/scripts/fetch-etcd.sh}). Leases may be as short as one second: the member runs
 * with a 10 ms heartbeat and a 100 ms election timeout, which sets etcd's minimum lease time to
 * live below a second.
 *
 * <p>Where the build has no etcd ({@code -Dkvbridge.etcd.required=false}), {@link #start()} skips
 * the calling test with the reason; where it is required, it fails it.
 *
 * <p>Lives in the module's test fixtures ({@code discovery-etcd}'s test jar, this package only), so
 * the starter's tests (and later the sample app's) start etcd the same way.
 *
 * <p>Threads: one test thread at a time.
 */
public final class EtcdServer implements AutoCloseable {

  private static final Duration STARTUP = Duration.ofSeconds(30);

  private final Path binary;
  private final Path workDir;
  private final int clientPort;
  private final int peerPort;
  private final HttpClient http = HttpClient.newHttpClient();
  private Process process;

  private EtcdServer(Path binary, Path workDir, int clientPort, int peerPort) {
    this.binary = binary;
    this.workDir = workDir;
    this.clientPort = clientPort;
    this.peerPort = peerPort;
  }

  /** Starts a fresh etcd and waits until it reports itself healthy. */
  public static EtcdServer start() {
    String binary = System.getProperty("kvbridge.etcd.binary", "");
    if (binary.isBlank()) {
      String reason =
          "the build has no etcd: "
              + System.getProperty("kvbridge.etcd.unavailable", "kvbridge.etcd.binary is not set");
      if (Boolean.parseBoolean(System.getProperty("kvbridge.etcd.required", "true"))) {
        throw new IllegalStateException(
            reason + " (build with -Dkvbridge.etcd.required=false to skip the etcd tests)");
      }
      Assumptions.abort(reason);
    }
    try {
      EtcdServer server =
          new EtcdServer(
              Path.of(binary), Files.createTempDirectory("kvbridge-etcd-"), freePort(), freePort());
      server.startProcess();
      return server;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start etcd", e);
    }
  }

  /** The client endpoint, {@code http://127.0.0.1:<port>}. */
  public String endpoint() {
    return "http://127.0.0.1:" + clientPort;
  }

  /** Kills the server (SIGKILL) and waits for it to exit; its data directory stays. */
  public void stop() {
    Process p = process;
    process = null;
    if (p == null) {
      return;
    }
    p.destroyForcibly();
    try {
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("etcd (pid " + p.pid() + ") did not exit when killed");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for etcd to exit", e);
    }
  }

  /** Starts the stopped server again on the same ports with the same data: etcd comes back. */
  public void restart() {
    if (process != null) {
      throw new IllegalStateException("etcd is running; stop it first");
    }
    startProcess();
  }

  /**
   * Starts the stopped server again on the same ports with an empty data directory: etcd comes back
   * as a new cluster that knows nothing of before.
   */
  public void restartEmpty() {
    if (process != null) {
      throw new IllegalStateException("etcd is running; stop it first");
    }
    deleteRecursively(dataDir());
    startProcess();
  }

  /** Stops the server and deletes its directory. */
  @Override
  public void close() {
    stop();
    deleteRecursively(workDir);
  }

  /** etcd's own log, for a failure's message. */
  public String log() {
    try {
      return Files.readString(workDir.resolve("etcd.log"));
    } catch (IOException e) {
      return "(no etcd log: " + e.getMessage() + ")";
    }
  }

  private void startProcess() {
    String peer = "http://127.0.0.1:" + peerPort;
    List<String> command = new ArrayList<>();
    command.add(binary.toString());
    command.addAll(
        List.of(
            "--name=kvbridge-test",
            "--data-dir=" + dataDir(),
            "--listen-client-urls=" + endpoint(),
            "--advertise-client-urls=" + endpoint(),
            "--listen-peer-urls=" + peer,
            "--initial-advertise-peer-urls=" + peer,
            "--initial-cluster=kvbridge-test=" + peer,
            "--heartbeat-interval=10",
            "--election-timeout=100",
            "--log-level=warn"));
    try {
      process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(
                  ProcessBuilder.Redirect.appendTo(workDir.resolve("etcd.log").toFile()))
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start etcd from " + binary, e);
    }
    Process started = process;
    await()
        .atMost(STARTUP)
        .pollInterval(Duration.ofMillis(50))
        .until(() -> !started.isAlive() || healthy());
    if (!started.isAlive()) {
      process = null;
      throw new IllegalStateException(
          "etcd exited at start-up with status " + started.exitValue() + ":\n" + log());
    }
  }

  private boolean healthy() {
    try {
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(URI.create(endpoint() + "/health"))
                  .timeout(Duration.ofSeconds(1))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      return response.statusCode() == 200 && response.body().contains("\"health\":\"true\"");
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private Path dataDir() {
    return workDir.resolve("data");
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  private static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(path);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + dir, e);
    }
  }
}
