package io.kvbridge.benchmarks.routing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import tools.jackson.databind.json.JsonMapper;

/**
 * The sample app as a fleet of separate processes on this machine: prefill and decode nodes and a
 * router over them (static pools), on the fake connector over a shared directory, and optionally a
 * NATS server their KV events go through. Any process can be killed (SIGKILL) and started again
 * with the same arguments, as a crash and a restart.
 */
final class Fleet implements AutoCloseable {

  static final JsonMapper JSON = JsonMapper.builder().build();
  private static final Duration READY = Duration.ofSeconds(180);

  private final Path jar;
  private final Path work;
  private final List<String> jvm;
  private final List<String> routerJvm;
  private final String routerCpus;
  private final List<String> engineArgs;
  private final Map<String, List<String>> commands = new LinkedHashMap<>();
  private final Map<String, Process> processes = new LinkedHashMap<>();
  private final Map<String, Integer> ports = new LinkedHashMap<>();
  private final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(2))
          .build();
  private final List<String> prefill = new ArrayList<>();
  private final List<String> decode = new ArrayList<>();

  private Fleet(
      Path jar,
      Path work,
      List<String> jvm,
      List<String> routerJvm,
      String routerCpus,
      List<String> engineArgs) {
    this.jar = jar;
    this.work = work;
    this.jvm = jvm;
    this.routerJvm = routerJvm;
    this.routerCpus = routerCpus;
    this.engineArgs = engineArgs;
  }

  /**
   * Starts {@code prefillNodes} prefill and {@code decodeNodes} decode nodes on JVM options {@code
   * jvm}, a NATS server if {@code nats} is its binary, and a router with {@code routerArgs} on JVM
   * options {@code routerJvm}, on CPUs {@code routerCpus} alone if not {@code null} (a {@code
   * taskset} list, as a router runs on a host of its own); returns once every one is UP.
   */
  static Fleet start(
      Path jar,
      Path work,
      List<String> jvm,
      List<String> routerJvm,
      String routerCpus,
      List<String> engineArgs,
      int prefillNodes,
      int decodeNodes,
      Path nats,
      List<String> routerArgs)
      throws IOException {
    Files.createDirectories(work.resolve("logs"));
    Fleet fleet = new Fleet(jar, work, jvm, routerJvm, routerCpus, engineArgs);
    try {
      if (nats != null) {
        int port = freePort();
        fleet.ports.put("nats", port);
        // A snapshot of a cache of tens of thousands of blocks is larger than the default 1 MiB.
        Path config = work.resolve("nats.conf");
        Files.writeString(config, "max_payload: 8MB\n");
        fleet.commands.put(
            "nats",
            List.of(
                nats.toString(),
                "-c",
                config.toString(),
                "-a",
                "127.0.0.1",
                "-p",
                Integer.toString(port),
                "-js",
                "-sd",
                work.resolve("nats-data").toString()));
        fleet.launch("nats");
        fleet.awaitListening("nats");
      }
      for (int i = 1; i <= prefillNodes; i++) {
        fleet.prefill.add(fleet.node("prefill", "prefill-" + i));
      }
      for (int i = 1; i <= decodeNodes; i++) {
        fleet.decode.add(fleet.node("decode", "decode-" + i));
      }
      int routerPort = freePort();
      fleet.ports.put("router", routerPort);
      List<String> router = new ArrayList<>();
      if (routerCpus != null) {
        router.addAll(List.of("taskset", "-c", routerCpus));
      }
      router.addAll(fleet.java(fleet.routerJvm));
      router.addAll(
          List.of(
              "--spring.profiles.active=router",
              "--server.port=" + routerPort,
              "--logging.level.root=WARN",
              "--kvbridge.sample.router.prefill-urls="
                  + fleet.prefill.stream().map(fleet::base).collect(Collectors.joining(",")),
              "--kvbridge.sample.router.decode-urls="
                  + fleet.decode.stream().map(fleet::base).collect(Collectors.joining(","))));
      router.addAll(fleet.engineArgs);
      router.addAll(fleet.eventArgs());
      router.addAll(routerArgs);
      fleet.commands.put("router", router);
      for (String name : fleet.commands.keySet()) {
        if (!name.equals("nats")) {
          fleet.launch(name);
        }
      }
      for (String name : fleet.commands.keySet()) {
        if (!name.equals("nats")) {
          fleet.awaitUp(name);
        }
      }
    } catch (IOException | RuntimeException e) {
      fleet.close();
      throw e;
    }
    return fleet;
  }

  private String node(String kind, String id) throws IOException {
    int port = freePort();
    ports.put(id, port);
    List<String> command = new ArrayList<>(java(jvm));
    command.addAll(
        List.of(
            "--spring.profiles.active=" + kind,
            "--server.port=" + port,
            "--logging.level.root=WARN",
            "--kvbridge.engine-id=" + id,
            "--kvbridge.sample." + kind + ".engine-id=" + id,
            "--kvbridge.connector.type=fake",
            "--kvbridge.fake.shared-dir=" + work.resolve("fabric")));
    command.addAll(engineArgs);
    command.addAll(eventArgs());
    commands.put(id, command);
    return id;
  }

  private List<String> java(List<String> options) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(options);
    command.add("-jar");
    command.add(jar.toString());
    return command;
  }

  private List<String> eventArgs() {
    Integer nats = ports.get("nats");
    return nats == null
        ? List.of()
        : List.of("--kvbridge.sample.events.nats.url=nats://127.0.0.1:" + nats);
  }

  private void launch(String name) throws IOException {
    Process process =
        new ProcessBuilder(commands.get(name))
            .redirectErrorStream(true)
            .redirectOutput(
                ProcessBuilder.Redirect.appendTo(
                    work.resolve("logs").resolve(name + ".log").toFile()))
            .start();
    processes.put(name, process);
  }

  /** The prefill nodes' names. */
  List<String> prefill() {
    return prefill;
  }

  /** The decode nodes' names. */
  List<String> decode() {
    return decode;
  }

  /** Every node's name. */
  List<String> nodes() {
    List<String> all = new ArrayList<>(prefill);
    all.addAll(decode);
    return all;
  }

  /** {@code http://127.0.0.1:<port>} of process {@code name}. */
  String base(String name) {
    return "http://127.0.0.1:" + ports.get(name);
  }

  /** The router's completions. */
  URI completions() {
    return URI.create(base("router") + "/v1/completions");
  }

  /** Kills process {@code name} (SIGKILL) and waits for it to exit. */
  void kill(String name) {
    Process process = processes.remove(name);
    if (process == null) {
      return;
    }
    process.destroyForcibly();
    try {
      process.waitFor(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Starts process {@code name} again with the same arguments and waits until it is UP. */
  void restart(String name) throws IOException {
    launch(name);
    if (name.equals("nats")) {
      awaitListening(name);
    } else {
      awaitUp(name);
    }
  }

  /** Process {@code name}'s {@code path}, as JSON. */
  Map<String, Object> get(String name, String path) throws IOException {
    @SuppressWarnings("unchecked")
    Map<String, Object> map = JSON.readValue(body(name, path), Map.class);
    return map;
  }

  /** Process {@code name}'s {@code path}, as text. */
  String text(String name, String path) throws IOException {
    return new String(body(name, path), StandardCharsets.UTF_8);
  }

  private byte[] body(String name, String path) throws IOException {
    try {
      HttpResponse<byte[]> response =
          http.send(
              HttpRequest.newBuilder(URI.create(base(name) + path))
                  .timeout(Duration.ofSeconds(10))
                  .GET()
                  .build(),
              HttpResponse.BodyHandlers.ofByteArray());
      if (response.statusCode() != 200) {
        throw new IOException(name + path + " answered " + response.statusCode());
      }
      return response.body();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
  }

  private void awaitUp(String name) throws IOException {
    long deadline = System.nanoTime() + READY.toNanos();
    while (true) {
      try {
        Map<String, Object> health = get(name, "/actuator/health");
        if ("UP".equals(health.get("status"))) {
          return;
        }
      } catch (IOException notYet) {
        // not listening yet
      }
      Process process = processes.get(name);
      if (process == null || !process.isAlive()) {
        throw new IOException(name + " exited before it was UP; see " + log(name));
      }
      if (System.nanoTime() > deadline) {
        throw new IOException(name + " was not UP within " + READY + "; see " + log(name));
      }
      sleep(100);
    }
  }

  private void awaitListening(String name) throws IOException {
    long deadline = System.nanoTime() + READY.toNanos();
    while (System.nanoTime() < deadline) {
      try (Socket socket = new Socket()) {
        socket.connect(new InetSocketAddress("127.0.0.1", ports.get(name)), 200);
        return;
      } catch (IOException notYet) {
        sleep(20);
      }
    }
    throw new IOException(name + " did not listen within " + READY + "; see " + log(name));
  }

  private Path log(String name) {
    return work.resolve("logs").resolve(name + ".log");
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  /** Stops every process (SIGTERM, then SIGKILL after 30 s). */
  @Override
  public void close() {
    List<String> order = new ArrayList<>(processes.keySet());
    Collections.reverse(order);
    for (String name : order) {
      processes.get(name).destroy();
    }
    for (String name : order) {
      Process p = processes.get(name);
      try {
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
          p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        p.destroyForcibly();
      }
    }
    processes.clear();
  }
}
