package io.kvbridge.benchmarks.requestpath;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One build of the sample app as three processes: a prefill node, a decode node and a router, on
 * the fake connector over a shared directory of their own, as {@code docs/sample.md} starts them.
 * Reads each process's CPU time from {@code /proc}, so a measurement window can charge it to the
 * requests that window served.
 */
final class NodeTrio implements AutoCloseable {

  /** Clock ticks per second of {@code /proc/<pid>/stat}'s times (USER_HZ; 100 on Linux). */
  private static final long TICKS_PER_SECOND = 100;

  private static final int ROUTER_PORT = 8000;

  private final Map<String, Process> processes = new LinkedHashMap<>();
  private final int routerPort;

  private NodeTrio(int routerPort) {
    this.routerPort = routerPort;
  }

  /**
   * Starts P, D and the router on their profiles' ports (8100, 8200 and 8000: every build's router
   * finds its nodes there without a property whose name changed between builds); their logs go to
   * {@code workDir}.
   */
  static NodeTrio start(Path jar, List<String> jvmOptions, Path workDir) throws IOException {
    Files.createDirectories(workDir);
    for (int port : new int[] {ROUTER_PORT, 8100, 8200}) {
      requireFree(port);
    }
    NodeTrio trio = new NodeTrio(ROUTER_PORT);
    String fabric = "--kvbridge.fake.shared-dir=" + workDir.resolve("fabric");
    try {
      trio.launch("prefill", jar, jvmOptions, workDir, fabric);
      trio.launch("decode", jar, jvmOptions, workDir, fabric);
      trio.launch("router", jar, jvmOptions, workDir);
      trio.awaitReady(
          Duration.ofSeconds(120),
          "http://127.0.0.1:8100",
          "http://127.0.0.1:8200",
          "http://127.0.0.1:" + ROUTER_PORT);
    } catch (IOException | RuntimeException e) {
      trio.close();
      throw e;
    }
    return trio;
  }

  /** Fails naming {@code port} when something listens there: it would answer for our nodes. */
  private static void requireFree(int port) throws IOException {
    boolean taken;
    try (java.net.Socket probe = new java.net.Socket()) {
      probe.connect(new java.net.InetSocketAddress("127.0.0.1", port), 1000);
      taken = probe.isConnected();
    } catch (java.net.ConnectException free) {
      taken = false;
    }
    if (taken) {
      throw new IOException(
          "port "
              + port
              + " is taken; the request path benchmark starts its nodes on 8000, 8100 and 8200");
    }
  }

  private void launch(
      String profile, Path jar, List<String> jvmOptions, Path workDir, String... args)
      throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmOptions);
    command.add("-jar");
    command.add(jar.toString());
    command.add("--spring.profiles.active=" + profile);
    command.add("--logging.level.root=WARN");
    command.addAll(List.of(args));
    Process process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(workDir.resolve(profile + ".log").toFile())
            .start();
    processes.put(profile, process);
  }

  private void awaitReady(Duration timeout, String... baseUrls) throws IOException {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    long deadline = System.nanoTime() + timeout.toNanos();
    for (String url : baseUrls) {
      while (!answers(http, url + "/actuator/health")) {
        for (Map.Entry<String, Process> e : processes.entrySet()) {
          if (!e.getValue().isAlive()) {
            throw new IOException(
                e.getKey() + " exited with " + e.getValue().exitValue() + " before it was ready");
          }
        }
        if (System.nanoTime() > deadline) {
          throw new IOException(url + " did not answer within " + timeout);
        }
        sleep(250);
      }
    }
  }

  private static boolean answers(HttpClient http, String url) {
    try {
      HttpRequest request = HttpRequest.newBuilder(URI.create(url)).GET().build();
      return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for " + url, e);
    }
  }

  /** Where clients send completions. */
  URI completions() {
    return URI.create("http://127.0.0.1:" + routerPort + "/v1/completions");
  }

  /**
   * The decode node's own completions: a request without transfer parameters is computed there,
   * whole, the colocated reference of what the P/D path must answer.
   */
  URI decodeCompletions() {
    return URI.create("http://127.0.0.1:8200/v1/completions");
  }

  /** CPU time (user and system) each process used so far, in milliseconds, by profile name. */
  Map<String, Long> cpuMillis() throws IOException {
    Map<String, Long> cpu = new LinkedHashMap<>();
    for (Map.Entry<String, Process> e : processes.entrySet()) {
      cpu.put(e.getKey(), cpuMillis(e.getValue().pid()));
    }
    return cpu;
  }

  private static long cpuMillis(long pid) throws IOException {
    String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
    // The command name in brackets may hold spaces: count fields from after its closing bracket,
    // where field 3 (state) starts; utime and stime are fields 14 and 15.
    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    return ticks * 1000 / TICKS_PER_SECOND;
  }

  /** Starts a JFR recording (profile settings) in every process, for {@link #stopRecording}. */
  void startRecording() throws IOException {
    for (Process p : processes.values()) {
      jcmd(p.pid(), "JFR.start", "name=request-path", "settings=profile");
    }
  }

  /**
   * Stops the recordings {@link #startRecording} started, writing one per process into {@code dir}.
   */
  void stopRecording(Path dir) throws IOException {
    Files.createDirectories(dir);
    for (Map.Entry<String, Process> e : processes.entrySet()) {
      Path file = dir.toAbsolutePath().resolve(e.getKey() + ".jfr");
      jcmd(e.getValue().pid(), "JFR.stop", "name=request-path", "filename=" + file);
    }
  }

  private static void jcmd(long pid, String... command) throws IOException {
    List<String> line = new ArrayList<>();
    line.add(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString());
    line.add(Long.toString(pid));
    line.addAll(List.of(command));
    try {
      Process p = new ProcessBuilder(line).redirectErrorStream(true).start();
      String output = new String(p.getInputStream().readAllBytes());
      if (p.waitFor() != 0) {
        throw new IOException(String.join(" ", line) + " failed: " + output);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted: " + String.join(" ", line), e);
    }
  }

  /** Stops every process (SIGTERM), waiting for each. */
  @Override
  public void close() {
    for (Process p : processes.values()) {
      p.destroy();
    }
    for (Process p : processes.values()) {
      try {
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
          p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        p.destroyForcibly();
      }
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
