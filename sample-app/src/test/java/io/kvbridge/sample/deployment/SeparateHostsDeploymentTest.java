package io.kvbridge.sample.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.sample.SampleApplication;
import io.kvbridge.sample.engine.ToyModel;
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
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.json.JsonMapper;

/**
 * A fleet on separate hosts, for real: etcd, two prefill nodes, two decode nodes and the router,
 * each a process in a Linux network namespace of its own, joined by a bridge; KV moves with NIXL
 * over UCX restricted to TCP on each host's one link ({@code UCX_TLS=tcp}: no shared memory), the
 * router's pools come from etcd. A workload runs through the router from this namespace, and one
 * prefill node's process is killed (SIGKILL) in the middle of it.
 *
 * <p>Needs root (to create namespaces) and the build's NIXL and etcd; without namespaces it is
 * skipped with the reason, except in CI ({@code CI=true}), where it fails.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SeparateHostsDeploymentTest {

  private static final Path REPOSITORY = Path.of("").toAbsolutePath().getParent();
  private static final ToyModel REFERENCE = ToyModel.standard();
  private static final JsonMapper JSON = JsonMapper.shared();
  private static final int REQUESTS = 64;
  private static final int CONCURRENCY = 8;
  private static final int KILL_AFTER = 16;
  private static final int MAX_TOKENS = 6;
  private static final Duration LEASE = Duration.ofSeconds(3);
  private static final String ETCD_TTL = "2s";

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final List<Process> processes = new ArrayList<>();
  private final Map<String, Process> byName = new LinkedHashMap<>();
  private final Map<String, String> nodeUrls = new LinkedHashMap<>();
  private final ConcurrentLinkedQueue<Answer> answers = new ConcurrentLinkedQueue<>();
  private NetworkNamespaces hosts;
  private Path work;
  private String router;
  private String deadPrefill;
  private String livePrefill;
  private long killedAtNanos;
  private volatile long removedFromPoolNanos = -1;
  private int killedWithLeases;
  private Map<String, Object> survivorAfterLease;

  @BeforeAll
  void deployKillAndMeasure(@TempDir Path workDir) throws Exception {
    var unavailable = NetworkNamespaces.unavailable();
    if (unavailable.isPresent()) {
      if ("true".equals(System.getenv("CI"))) {
        throw new IllegalStateException(unavailable.get());
      }
      System.out.println("SeparateHostsDeploymentTest skipped: " + unavailable.get());
      Assumptions.abort(unavailable.get());
    }
    String etcdBinary = System.getProperty("kvbridge.etcd.binary", "");
    Path nixl = REPOSITORY.resolve("connector-nixl/target/nixl/lib");
    requireOrSkip(
        "kvbridge.etcd.required",
        !etcdBinary.isBlank(),
        "the build has no etcd: " + System.getProperty("kvbridge.etcd.unavailable", ""));
    requireOrSkip(
        "kvbridge.test.nixl-required",
        Files.isDirectory(nixl),
        "NIXL is not fetched into " + nixl + "; run ./mvnw -pl connector-nixl generate-resources");
    work = workDir;
    hosts = NetworkNamespaces.create();

    String etcd = "http://" + hosts.address(2) + ":2379";
    launch(
        "etcd",
        hosts.host("etcd", 2),
        List.of(
            etcdBinary,
            "--name=fleet",
            "--data-dir=" + work.resolve("etcd-data"),
            "--listen-client-urls=" + etcd,
            "--advertise-client-urls=" + etcd,
            "--listen-peer-urls=http://" + hosts.address(2) + ":2380",
            "--initial-advertise-peer-urls=http://" + hosts.address(2) + ":2380",
            "--initial-cluster=fleet=http://" + hosts.address(2) + ":2380",
            "--log-level=warn"));
    awaitUp("etcd", etcd + "/health");

    int octet = 3;
    for (String kind : List.of("prefill", "decode")) {
      for (int i = 1; i <= 2; i++, octet++) {
        String id = kind + "-" + i;
        String address = hosts.address(octet);
        List<String> args =
            new ArrayList<>(
                List.of(
                    "--spring.profiles.active=" + kind,
                    "--server.port=8100",
                    "--kvbridge.engine-id=" + id,
                    "--kvbridge.sample." + kind + ".engine-id=" + id,
                    "--kvbridge.sample.advertised-host=" + address,
                    "--kvbridge.handshake.address=tcp://" + address + ":0",
                    "--kvbridge.discovery.etcd.endpoints=" + etcd,
                    "--kvbridge.discovery.etcd.ttl=" + ETCD_TTL,
                    "--kvbridge.lease.duration=" + LEASE.toSeconds() + "s",
                    "--kvbridge.connector.type=nixl",
                    "--kvbridge.nixl.memory=dram",
                    "--kvbridge.nixl.home=" + nixl));
        launch(id, hosts.host(id, octet), java(args));
        nodeUrls.put(id, "http://" + address + ":8100");
      }
    }
    router = "http://" + hosts.address(octet) + ":8000";
    launch(
        "router",
        hosts.host("router", octet),
        java(
            List.of(
                "--spring.profiles.active=router",
                "--server.port=8000",
                "--kvbridge.sample.router.health-interval=500ms",
                "--kvbridge.discovery.etcd.endpoints=" + etcd)));
    await()
        .atMost(Duration.ofSeconds(180))
        .pollInterval(Duration.ofMillis(500))
        .ignoreExceptions()
        .untilAsserted(
            () -> {
              everyProcessAlive();
              assertThat(pool("prefill")).hasSize(2);
              assertThat(pool("decode")).hasSize(2);
            });
    deadPrefill = "prefill-1";
    livePrefill = "prefill-2";

    runWorkloadKillingOnePrefillNode();

    Thread.sleep(LEASE.toMillis()); // one lease duration after the load stopped
    survivorAfterLease = new LinkedHashMap<>(producer(livePrefill));
    survivorAfterLease.put("blocks", leasedBlocks(livePrefill));
    printFigures();
  }

  /** Fails, or skips where the build says {@code property=false}, unless {@code present}. */
  private static void requireOrSkip(String property, boolean present, String missing) {
    if (Boolean.parseBoolean(System.getProperty(property, "true"))) {
      assertThat(present).as(missing).isTrue();
    } else {
      Assumptions.assumeTrue(present, missing);
    }
  }

  @AfterAll
  void tearDown() throws Exception {
    for (Process process : processes) {
      process.destroy();
    }
    for (Process process : processes) {
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
    if (hosts != null) {
      hosts.close();
    }
  }

  @Test
  void everyRequestEndsServedOrWithAClearError() {
    assertThat(answers).hasSize(REQUESTS);
    assertThat(answers)
        .allSatisfy(
            a -> {
              if (a.status() != 200) {
                assertThat(a.reason()).as("why request %s failed", a.prompt()).isNotBlank();
              }
            });
    assertThat(answers.stream().filter(a -> a.status() == 200)).isNotEmpty();
  }

  @Test
  void noServedCompletionDiffersFromTheReference() {
    assertThat(answers.stream().filter(a -> a.status() == 200))
        .allSatisfy(
            a ->
                assertThat(a.text())
                    .isEqualTo(REFERENCE.referenceCompletion(a.prompt(), MAX_TOKENS)));
  }

  @Test
  void theSurvivingPrefillNodeHoldsNoBlocksOneLeaseDurationAfterTheLoad() {
    assertThat(survivorAfterLease).containsEntry("liveLeases", 0).containsEntry("blocks", 0);
  }

  @Test
  void theDeadPrefillNodeIsRemovedFromTheRoutersPool() {
    assertThat(removedFromPoolNanos).as("time the dead node left the pool").isPositive();
    assertThat(pool("prefill")).noneMatch(name -> name.startsWith(deadPrefill + " "));
    assertThat(pool("prefill")).anyMatch(name -> name.startsWith(livePrefill + " "));
  }

  private void runWorkloadKillingOnePrefillNode() throws Exception {
    ExecutorService clients = Executors.newFixedThreadPool(CONCURRENCY);
    AtomicInteger done = new AtomicInteger();
    CountDownLatch killPoint = new CountDownLatch(KILL_AFTER);
    for (int i = 0; i < REQUESTS; i++) {
      String prompt =
          ("Request " + i + " crosses hosts over TCP, and one prefill node dies. ")
              .repeat(4 * (1 + i % 5));
      clients.execute(
          () -> {
            answers.add(complete(prompt));
            done.incrementAndGet();
            killPoint.countDown();
          });
    }
    assertThat(killPoint.await(180, TimeUnit.SECONDS)).as("the first requests ended").isTrue();
    // Killed while it holds a lease a decode node is about to read, if that comes within seconds.
    killedWithLeases = awaitLiveLeases(deadPrefill, Duration.ofSeconds(10));
    killedAtNanos = System.nanoTime();
    byName.get(deadPrefill).destroyForcibly();
    Thread watcher =
        new Thread(
            () -> {
              while (removedFromPoolNanos < 0) {
                try {
                  if (pool("prefill").stream()
                      .noneMatch(name -> name.startsWith(deadPrefill + " "))) {
                    removedFromPoolNanos = System.nanoTime();
                    return;
                  }
                  Thread.sleep(50);
                } catch (InterruptedException e) {
                  return;
                } catch (RuntimeException e) {
                  // the router did not answer this time; ask again
                }
              }
            },
            "pool-watcher");
    watcher.setDaemon(true);
    watcher.start();
    clients.shutdown();
    assertThat(clients.awaitTermination(300, TimeUnit.SECONDS)).as("the workload ended").isTrue();
    watcher.join(Duration.ofSeconds(30).toMillis());
  }

  /**
   * Waits until {@code engineId} holds a live lease, at most {@code patience}; how many it holds.
   */
  private int awaitLiveLeases(String engineId, Duration patience) {
    long deadline = System.nanoTime() + patience.toNanos();
    int live = 0;
    while (System.nanoTime() < deadline && live == 0) {
      try {
        live = ((Number) producer(engineId).get("liveLeases")).intValue();
      } catch (RuntimeException e) {
        // not answered this time
      }
    }
    return live;
  }

  private Answer complete(String prompt) {
    long start = System.nanoTime();
    try {
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(URI.create(router + "/v1/completions"))
                  .timeout(Duration.ofSeconds(120))
                  .header("Content-Type", "application/json")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          JSON.writeValueAsString(
                              Map.of("prompt", prompt, "max_tokens", MAX_TOKENS))))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      Map<String, Object> body = map(JSON.readValue(response.body(), Map.class));
      if (response.statusCode() == 200) {
        String text = (String) map(list(body.get("choices")).get(0)).get("text");
        return new Answer(prompt, 200, text, "", System.nanoTime());
      }
      Map<String, Object> error = map(body.get("error"));
      return new Answer(
          prompt,
          response.statusCode(),
          null,
          error.get("type") + ": " + error.get("message"),
          System.nanoTime());
    } catch (IOException | RuntimeException e) {
      return new Answer(prompt, -1, null, "no answer: " + e, System.nanoTime());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Answer(prompt, -1, null, "interrupted after " + (System.nanoTime() - start), 0);
    }
  }

  private void printFigures() throws IOException {
    long served = answers.stream().filter(a -> a.status() == 200).count();
    Map<String, Integer> failures = new TreeMap<>();
    long firstFailure = Long.MAX_VALUE;
    long lastFailure = -1;
    for (Answer a : answers) {
      if (a.status() != 200) {
        String reason = a.reason();
        String kind = a.status() + " " + reason.substring(0, Math.min(300, reason.length()));
        failures.merge(kind, 1, Integer::sum);
        if (a.endedNanos() > killedAtNanos) {
          firstFailure = Math.min(firstFailure, a.endedNanos() - killedAtNanos);
          lastFailure = Math.max(lastFailure, a.endedNanos() - killedAtNanos);
        }
      }
    }
    StringBuilder out =
        new StringBuilder("\n===== fleet on separate hosts (network namespaces) =====\n");
    out.append(
        "hosts: etcd, prefill-1, prefill-2, decode-1, decode-2, router; NIXL over UCX_TLS=tcp\n");
    out.append("requests ").append(REQUESTS).append(", served ").append(served).append('\n');
    out.append("failed ").append(REQUESTS - served).append(failures.isEmpty() ? "\n" : ":\n");
    failures.forEach((why, n) -> out.append("  ").append(n).append(" x ").append(why).append('\n'));
    out.append("killed ")
        .append(deadPrefill)
        .append(" (SIGKILL) after ")
        .append(KILL_AFTER)
        .append(" answers, holding ")
        .append(killedWithLeases)
        .append(" live lease(s)\n");
    out.append("dead P removed from the router's pool after ")
        .append(removedFromPoolNanos < 0 ? "(never)" : millis(removedFromPoolNanos - killedAtNanos))
        .append(" (etcd ttl ")
        .append(ETCD_TTL)
        .append(")\n");
    out.append("failed answers after the kill: ")
        .append(
            lastFailure < 0
                ? "none"
                : "first " + millis(firstFailure) + ", last " + millis(lastFailure))
        .append('\n');
    for (String d : List.of("decode-1", "decode-2")) {
      Map<String, Object> consumer = consumer(d);
      out.append(d)
          .append(": loads failed ")
          .append(consumer.get("loadsFailed"))
          .append(", reads completed ")
          .append(consumer.get("readsCompleted"))
          .append('\n');
    }
    out.append(livePrefill)
        .append(" one lease duration (")
        .append(LEASE.toSeconds())
        .append(" s) after the load: live leases ")
        .append(survivorAfterLease.get("liveLeases"))
        .append(", blocks held for decode nodes ")
        .append(survivorAfterLease.get("blocks"))
        .append(", leases ended ")
        .append(survivorAfterLease.get("leasesEnded"))
        .append('\n');
    out.append(deadPrefill).append(": its process is dead, its memory went with it\n");
    out.append("========================================================\n");
    System.out.print(out);
    Files.writeString(work.resolve("figures.txt"), out);
  }

  private static String millis(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos) + " ms";
  }

  // ---------------------------------------------------------------- processes

  private List<String> java(List<String> args) {
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xms64m",
                "-Xmx384m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                System.getProperty("java.class.path"),
                SampleApplication.class.getName()));
    command.addAll(args);
    command.add("--spring.main.banner-mode=off");
    return command;
  }

  private void launch(String name, String namespace, List<String> command) throws IOException {
    ProcessBuilder builder =
        new ProcessBuilder(NetworkNamespaces.command(namespace, command))
            .redirectErrorStream(true)
            .redirectOutput(work.resolve(name + ".log").toFile());
    // NIXL's UCX over TCP on the host's one link: no shared memory, no loopback shortcut.
    builder.environment().put("UCX_TLS", "tcp");
    builder.environment().put("UCX_NET_DEVICES", "eth0");
    Process process = builder.start();
    processes.add(process);
    byName.put(name, process);
  }

  private void everyProcessAlive() throws IOException {
    for (Map.Entry<String, Process> p : byName.entrySet()) {
      if (!p.getValue().isAlive()) {
        List<String> log = Files.readAllLines(work.resolve(p.getKey() + ".log"));
        throw new IllegalStateException(
            p.getKey()
                + " exited:\n"
                + String.join("\n", log.subList(Math.max(0, log.size() - 40), log.size())));
      }
    }
  }

  private void awaitUp(String name, String url) {
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(200))
        .ignoreExceptions()
        .until(
            () -> {
              everyProcessAlive();
              return get(url).contains("true");
            });
  }

  // ---------------------------------------------------------------- HTTP

  private List<String> pool(String kind) {
    Map<String, Object> info = map(JSON.readValue(get(router + "/actuator/info"), Map.class));
    return list(map(info.get("kvbridgeRouter")).get(kind)).stream()
        .map(node -> (String) map(node).get("url"))
        .toList();
  }

  /** The producer part of node {@code engineId}'s connector status. */
  private Map<String, Object> producer(String engineId) {
    return connectorPart(engineId, "producer");
  }

  /** The KV blocks node {@code engineId} holds for decode nodes now (its leases' blocks). */
  private int leasedBlocks(String engineId) {
    Map<String, Object> metric =
        map(
            JSON.readValue(
                get(nodeUrls.get(engineId) + "/actuator/metrics/kvbridge.leases.blocks"),
                Map.class));
    return ((Number) map(list(metric.get("measurements")).get(0)).get("value")).intValue();
  }

  private Map<String, Object> consumer(String engineId) {
    return connectorPart(engineId, "consumer");
  }

  private Map<String, Object> connectorPart(String engineId, String part) {
    String base = nodeUrls.get(engineId);
    Map<String, Object> status = map(JSON.readValue(get(base + "/actuator/kvbridge"), Map.class));
    return map(map(list(status.get("connectors")).get(0)).get(part));
  }

  private String get(String url) {
    try {
      return http.send(
              HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).build(),
              HttpResponse.BodyHandlers.ofString())
          .body();
    } catch (IOException e) {
      throw new IllegalStateException("GET " + url + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object json) {
    return (Map<String, Object>) json;
  }

  @SuppressWarnings("unchecked")
  private static List<Object> list(Object json) {
    return (List<Object>) json;
  }

  private record Answer(String prompt, int status, String text, String reason, long endedNanos) {}
}
