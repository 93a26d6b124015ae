package io.kvbridge.benchmarks.routing;

import io.kvbridge.events.BlockHashes;
import io.kvbridge.events.PrefixIndex;
import java.io.IOException;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Cache-aware routing measured: the same multi-turn workload (conversations sharing a few system
 * prompts, each turn's prompt the whole of the previous turn, its answer and a new message) sent
 * through a fleet of separate processes (2 prefill and 4 decode nodes and a router, fake connector)
 * under two policies, each on a fresh fleet whose caches were first filled with other prompts:
 *
 * <ul>
 *   <li>{@code load}: today's policy without KV events ({@code kvbridge.sample.router.prefix-aware
 *       =false}): nodes chosen by load alone;
 *   <li>{@code cache}: the prefix-aware router, its events through NATS JetStream.
 * </ul>
 *
 * <p>For each request it records the time to its answer (one token asked: the time to first token),
 * the prompt tokens the decode node took from its cache, and what an oracle that knows every decode
 * node's cache could have served: the most of the prompt's leading full blocks any decode node
 * holds as the request is sent (each node's own events, followed by this process). Engines'
 * counters before and after give the tokens loaded P to D and computed anywhere; the router gives
 * its index's size and its decision times, those of the workload alone from its decision histogram
 * read before and after it (the fill's decisions, of long new prompts on a cold JVM, are not the
 * workload's). For a run by hand, {@code --router-cpus} runs the router on those CPUs ({@code
 * taskset}), as on a host of its own, while the caller runs this process, and so every other of the
 * fleet, on the others ({@code taskset -c LIST java ...}; {@code --others-cpus} records which). On
 * two CPUs that leaves the nine other processes one, too few for the load-only fleet: its leases
 * expire. Then, on the cache fleet, it kills (SIGKILL) and restarts one decode node, the router and
 * the NATS server in turn, and measures how long the router's index takes to agree with the
 * engines' snapshots again.
 *
 * <pre>
 * java -cp benchmarks.jar io.kvbridge.benchmarks.routing.MultiTurnRun --jar APP.jar --nats BINARY
 *   --work DIR --out multi-turn.json [--quick] [--only load|cache] [--extra --some.property=value]
 *   [--router-jvm "JVM options"] [--router-cpus LIST --others-cpus LIST]
 * </pre>
 */
public final class MultiTurnRun {

  private static final long AGREEMENT_DEADLINE_NANOS = Duration.ofSeconds(60).toNanos();

  /** The JVM options of every node: a small heap, the serial collector, as on two cores. */
  static final List<String> NODE_JVM = List.of("-Xms64m", "-Xmx512m", "-XX:+UseSerialGC");

  /** The router's JVM options, under both policies (--router-jvm replaces them). */
  static final List<String> ROUTER_JVM = NODE_JVM;

  private final Settings settings;
  private final Path jar;
  private final Path nats;
  private final Path work;
  private final List<String> extra;
  private final List<String> routerJvm;
  private final String routerCpus;
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  private MultiTurnRun(
      Settings settings,
      Path jar,
      Path nats,
      Path work,
      List<String> extra,
      List<String> routerJvm,
      String routerCpus) {
    this.settings = settings;
    this.jar = jar;
    this.nats = nats;
    this.work = work;
    this.extra = extra;
    this.routerJvm = routerJvm;
    this.routerCpus = routerCpus;
  }

  /** The run's settings. */
  record Settings(
      int prefillNodes,
      int decodeNodes,
      int conversations,
      int turns,
      int concurrency,
      int systemPrompts,
      int systemBytes,
      int userBytes,
      int fillers,
      int fillerBytes,
      int cacheBlocks,
      int blockCount,
      int tokensPerBlock,
      long seed) {

    static Settings full() {
      return new Settings(2, 4, 200, 5, 16, 8, 1024, 200, 104, 7936, 20000, 32768, 16, 42);
    }

    static Settings quick() {
      return new Settings(2, 4, 16, 3, 4, 4, 512, 100, 8, 2048, 4096, 8192, 16, 42);
    }
  }

  public static void main(String[] args) throws Exception {
    Path jar = null;
    Path nats = null;
    Path work = null;
    Path out = null;
    Settings settings = Settings.full();
    List<String> only = List.of("load", "cache");
    List<String> extra = new ArrayList<>();
    List<String> routerJvm = ROUTER_JVM;
    String routerCpus = null;
    String othersCpus = null;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--jar" -> jar = Path.of(args[++i]);
        case "--nats" -> nats = Path.of(args[++i]);
        case "--work" -> work = Path.of(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        case "--quick" -> settings = Settings.quick();
        case "--only" -> only = List.of(args[++i]);
        case "--extra" -> extra.add(args[++i]);
        case "--router-jvm" -> routerJvm = List.of(args[++i].trim().split("\\s+"));
        case "--router-cpus" -> routerCpus = args[++i];
        case "--others-cpus" -> othersCpus = args[++i];
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    if (jar == null || nats == null || work == null || out == null) {
      throw new IllegalArgumentException("give --jar APP.jar --nats BINARY --work DIR --out FILE");
    }
    MultiTurnRun run = new MultiTurnRun(settings, jar, nats, work, extra, routerJvm, routerCpus);
    Map<String, Object> result = new LinkedHashMap<>();
    result.put("settings", settings);
    Map<String, Object> placement = new LinkedHashMap<>();
    placement.put("router_cpus", routerCpus);
    placement.put("others_cpus", othersCpus);
    placement.put("router_jvm", String.join(" ", routerJvm));
    placement.put("node_jvm", String.join(" ", NODE_JVM));
    result.put("placement", placement);
    Map<String, Object> policies = new LinkedHashMap<>();
    if (only.contains("load")) {
      policies.put("load", run.policy("load", false, null));
    }
    Map<String, Object> recovery = new LinkedHashMap<>();
    if (only.contains("cache")) {
      policies.put("cache", run.policy("cache", true, recovery));
    }
    result.put("policies", policies);
    result.put("recovery", recovery);
    Files.createDirectories(out.toAbsolutePath().getParent());
    Fleet.JSON.writerWithDefaultPrettyPrinter().writeValue(out.toFile(), result);
    System.err.println("[multi-turn] wrote " + out);
  }

  /** One policy on a fresh fleet; with {@code recovery}, the restarts are measured into it. */
  private Map<String, Object> policy(String name, boolean cacheAware, Map<String, Object> recovery)
      throws Exception {
    List<String> jvm = NODE_JVM;
    List<String> engine =
        new ArrayList<>(
            List.of(
                "--kvbridge.sample.engine.block-count=" + settings.blockCount(),
                "--kvbridge.sample.engine.prefix-cache-blocks=" + settings.cacheBlocks(),
                "--kvbridge.sample.engine.tokens-per-block=" + settings.tokensPerBlock()));
    // Settings of every process a run adds by hand (--extra), e.g. to try one.
    engine.addAll(extra);
    List<String> router =
        List.of(
            "--kvbridge.sample.router.prefix-aware=" + cacheAware,
            "--kvbridge.sample.router.health-interval=500ms");
    log(name + ": starting the fleet");
    try (Fleet fleet =
        Fleet.start(
            jar,
            work.resolve(name),
            jvm,
            routerJvm,
            routerCpus,
            engine,
            settings.prefillNodes(),
            settings.decodeNodes(),
            cacheAware ? nats : null,
            router)) {
      Conversations text =
          new Conversations(
              settings.seed(),
              settings.systemPrompts(),
              settings.systemBytes(),
              settings.userBytes());
      log(name + ": filling the caches with " + settings.fillers() + " other prompts");
      fill(fleet, text);
      // The model the engines name their blocks by, as their snapshots say.
      String model = (String) fleet.get(fleet.decode().get(0), "/kv/events/snapshot").get("model");
      PrefixIndex mirrored = new PrefixIndex(model, settings.tokensPerBlock());
      try (CacheMirror mirror = new CacheMirror(mirrored, fleet, fleet.decode())) {
        awaitTrue(() -> mirror.synced(settings.decodeNodes()), "the oracle's view of the caches");
        if (cacheAware) {
          awaitTrue(() -> agreement(fleet).agrees(), "the router's index");
        }
        Map<String, Map<String, Number>> before = engines(fleet);
        DecisionHistogram decidedBefore = decisions(fleet);
        log(
            name
                + ": "
                + settings.conversations()
                + " conversations of "
                + settings.turns()
                + " turns");
        long started = System.nanoTime();
        List<Sample> samples =
            workload(fleet, text, mirror, new BlockHashes(model, settings.tokensPerBlock()));
        long elapsed = System.nanoTime() - started;
        Map<String, Map<String, Number>> after = engines(fleet);
        Map<String, Object> routerInfo = routerInfo(fleet);
        Map<String, Object> figures = figures(samples, before, after, routerInfo, elapsed);
        DecisionHistogram workload = decisions(fleet).since(decidedBefore);
        Map<String, Object> decided = new LinkedHashMap<>();
        decided.put("count", workload.count());
        // Beyond the last bound (or nothing counted) as null: JSON has no infinity.
        decided.put("p50AtMostMicros", finiteOrNull(workload.quantileAtMostMicros(0.5)));
        decided.put("p99AtMostMicros", finiteOrNull(workload.quantileAtMostMicros(0.99)));
        figures.put("workload_decisions", decided);
        if (recovery != null) {
          recover(fleet, text, recovery);
        }
        return figures;
      }
    }
  }

  private void fill(Fleet fleet, Conversations text) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      List<Future<Answer>> sent = new ArrayList<>();
      for (int i = 0; i < settings.fillers(); i++) {
        String prompt = text.filler(i, settings.fillerBytes());
        sent.add(pool.submit(() -> send(fleet, prompt)));
      }
      for (Future<Answer> answer : sent) {
        answer.get();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /** One request's figures. */
  private record Sample(
      long nanos, int promptTokens, int oracleTokens, int cachedTokens, String source) {}

  private List<Sample> workload(
      Fleet fleet, Conversations text, CacheMirror mirror, BlockHashes hashes) throws Exception {
    List<Sample> samples = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger next = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(settings.concurrency());
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int w = 0; w < settings.concurrency(); w++) {
        workers.add(
            pool.submit(
                () -> {
                  for (int c = next.getAndIncrement();
                      c < settings.conversations();
                      c = next.getAndIncrement()) {
                    String prompt = text.system(c);
                    for (int turn = 1; turn <= settings.turns(); turn++) {
                      prompt += text.user(c, turn);
                      byte[] bytes = prompt.getBytes(StandardCharsets.UTF_8);
                      int[] tokens = new int[bytes.length];
                      for (int i = 0; i < bytes.length; i++) {
                        tokens[i] = bytes[i] & 0xFF;
                      }
                      int oracle = mirror.bestMatch(hashes.of(tokens)) * settings.tokensPerBlock();
                      long t0 = System.nanoTime();
                      Answer answer = send(fleet, prompt);
                      long took = System.nanoTime() - t0;
                      int full = answer.cachedTokens() / settings.tokensPerBlock();
                      samples.add(
                          new Sample(
                              took,
                              tokens.length,
                              oracle,
                              full * settings.tokensPerBlock(),
                              answer.source()));
                      prompt += answer.text();
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> worker : workers) {
        worker.get();
      }
    } finally {
      pool.shutdownNow();
    }
    return samples;
  }

  /** What one completion answered. */
  private record Answer(String text, int cachedTokens, String source) {}

  private Answer send(Fleet fleet, String prompt) throws IOException, InterruptedException {
    byte[] body =
        Fleet.JSON.writeValueAsBytes(Map.of("prompt", prompt, "max_tokens", 1, "temperature", 0));
    HttpResponse<byte[]> response =
        http.send(
            HttpRequest.newBuilder(fleet.completions())
                .header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .build(),
            HttpResponse.BodyHandlers.ofByteArray());
    if (response.statusCode() != 200) {
      throw new IOException(
          "the router answered "
              + response.statusCode()
              + ": "
              + new String(response.body(), StandardCharsets.UTF_8));
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> map = Fleet.JSON.readValue(response.body(), Map.class);
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> choices = (List<Map<String, Object>>) map.get("choices");
    @SuppressWarnings("unchecked")
    Map<String, Object> kv = (Map<String, Object>) map.get("kvbridge");
    return new Answer(
        String.valueOf(choices.get(0).get("text")),
        ((Number) kv.get("cached_tokens")).intValue(),
        String.valueOf(kv.get("kv_source")));
  }

  /** Each node's engine counters, by node name. */
  private Map<String, Map<String, Number>> engines(Fleet fleet) throws IOException {
    Map<String, Map<String, Number>> all = new LinkedHashMap<>();
    for (String node : fleet.nodes()) {
      @SuppressWarnings("unchecked")
      Map<String, Map<String, Number>> nodes =
          (Map<String, Map<String, Number>>) fleet.get(node, "/actuator/info").get("kvbridgeNodes");
      all.put(node, nodes.values().iterator().next());
    }
    return all;
  }

  private static Double finiteOrNull(double value) {
    return Double.isFinite(value) ? value : null;
  }

  /** The router's decision-time histogram now. */
  private static DecisionHistogram decisions(Fleet fleet) throws IOException {
    return DecisionHistogram.parse(fleet.text("router", "/actuator/prometheus"));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> routerInfo(Fleet fleet) throws IOException {
    return (Map<String, Object>) fleet.get("router", "/actuator/info").get("kvbridgeRouter");
  }

  private Map<String, Object> figures(
      List<Sample> samples,
      Map<String, Map<String, Number>> before,
      Map<String, Map<String, Number>> after,
      Map<String, Object> router,
      long elapsed) {
    Map<String, Object> f = new LinkedHashMap<>();
    f.put("requests", samples.size());
    f.put("elapsed_s", elapsed / 1e9);
    List<Long> nanos = samples.stream().map(Sample::nanos).sorted().toList();
    f.put("ttft_p50_ms", nearestRank(nanos, 0.5) / 1e6);
    f.put("ttft_p90_ms", nearestRank(nanos, 0.9) / 1e6);
    f.put("prompt_tokens", samples.stream().mapToLong(Sample::promptTokens).sum());
    f.put("oracle_tokens", samples.stream().mapToLong(Sample::oracleTokens).sum());
    f.put("cached_tokens", samples.stream().mapToLong(Sample::cachedTokens).sum());
    Map<String, Long> sources = new LinkedHashMap<>();
    samples.forEach(s -> sources.merge(s.source(), 1L, Long::sum));
    f.put("kv_sources", sources);
    // Where D's KV came from decides the path: COMPUTED is a request D served alone.
    Map<String, Double> bySource = new LinkedHashMap<>();
    for (String source : sources.keySet()) {
      List<Long> of =
          samples.stream()
              .filter(s -> s.source().equals(source))
              .map(Sample::nanos)
              .sorted()
              .toList();
      bySource.put(source, nearestRank(of, 0.5) / 1e6);
    }
    f.put("ttft_p50_ms_by_source", bySource);
    f.put("moved_tokens", delta(before, after, "loadedTokens", null));
    f.put("computed_tokens", delta(before, after, "computedTokens", null));
    f.put("computed_tokens_prefill", delta(before, after, "computedTokens", "prefill"));
    f.put("computed_tokens_decode", delta(before, after, "computedTokens", "decode"));
    f.put("decisions", router.get("decisions"));
    f.put("decoded_alone", router.get("decodedAlone"));
    f.put("prefix_routed", router.get("prefixRouted"));
    f.put("prefill_prefix_routed", router.get("prefillPrefixRouted"));
    Object index = router.get("prefixIndex");
    if (index instanceof Map<?, ?> map && map.get("index") instanceof Map<?, ?> stats) {
      f.put("index_blocks", stats.get("blocks"));
      f.put("index_source", map.get("source"));
    }
    return f;
  }

  private static long delta(
      Map<String, Map<String, Number>> before,
      Map<String, Map<String, Number>> after,
      String counter,
      String kind) {
    long sum = 0;
    for (String node : after.keySet()) {
      if (kind == null || node.startsWith(kind)) {
        sum += after.get(node).get(counter).longValue() - before.get(node).get(counter).longValue();
      }
    }
    return sum;
  }

  private static long nearestRank(List<Long> sorted, double quantile) {
    if (sorted.isEmpty()) {
      return 0;
    }
    int rank = (int) Math.ceil(quantile * sorted.size());
    return sorted.get(Math.max(0, rank - 1));
  }

  // ---- recovery
  // ----------------------------------------------------------------------------------

  /** The router's index against the engines' own snapshots. */
  private record Agreement(long indexBlocks, long indexEngines, long engineBlocks, int engines) {
    boolean agrees() {
      return indexEngines == engines && indexBlocks == engineBlocks;
    }
  }

  private Agreement agreement(Fleet fleet) throws IOException {
    long blocks = 0;
    for (String node : fleet.nodes()) {
      blocks += ((List<?>) fleet.get(node, "/kv/events/snapshot").get("block_hashes")).size();
    }
    Map<String, Object> router = routerInfo(fleet);
    @SuppressWarnings("unchecked")
    Map<String, Object> stats =
        (Map<String, Object>) ((Map<String, Object>) router.get("prefixIndex")).get("index");
    return new Agreement(
        ((Number) stats.get("blocks")).longValue(),
        ((Number) stats.get("engines")).longValue(),
        blocks,
        fleet.nodes().size());
  }

  /** Milliseconds from now until the router's index agrees with every engine's snapshot. */
  private double millisToAgree(Fleet fleet) throws IOException {
    long started = System.nanoTime();
    Agreement last = null;
    while (System.nanoTime() - started < AGREEMENT_DEADLINE_NANOS) {
      try {
        last = agreement(fleet);
        if (last.agrees()) {
          return (System.nanoTime() - started) / 1e6;
        }
      } catch (IOException notYet) {
        // the router may not answer yet
      }
      Fleet.sleep(20);
    }
    throw new IOException("the router's index did not agree within 60 s: " + last);
  }

  private void recover(Fleet fleet, Conversations text, Map<String, Object> recovery)
      throws Exception {
    String victim = fleet.decode().get(fleet.decode().size() - 1);
    log("recovery: killing " + victim + ", sending requests while it is gone");
    fleet.kill(victim);
    long calls = -1;
    for (int i = 0; i < 24; i++) {
      send(fleet, text.filler(100_000 + i, 600));
      Map<String, Object> node = decodeNodeStats(fleet, victim);
      if (calls < 0 && Boolean.FALSE.equals(node.get("healthy"))) {
        calls = calls(node);
      }
    }
    long callsAfterDown = calls < 0 ? -1 : calls(decodeNodeStats(fleet, victim)) - calls;
    recovery.put("calls_to_killed_decode_after_marked_down", callsAfterDown);
    fleet.restart(victim);
    recovery.put("decode_restart_ms", millisToAgree(fleet));
    log("recovery: restarting the router");
    fleet.kill("router");
    fleet.restart("router");
    recovery.put("router_restart_ms", millisToAgree(fleet));
    log("recovery: restarting the NATS server, with requests while it is gone");
    fleet.kill("nats");
    for (int i = 0; i < 8; i++) {
      send(fleet, text.filler(200_000 + i, 600));
    }
    fleet.restart("nats");
    recovery.put("broker_restart_ms", millisToAgree(fleet));
  }

  @SuppressWarnings("unchecked")
  private Map<String, Object> decodeNodeStats(Fleet fleet, String node) throws IOException {
    for (Map<String, Object> stats : (List<Map<String, Object>>) routerInfo(fleet).get("decode")) {
      if (String.valueOf(stats.get("url")).equals(fleet.base(node))) {
        return stats;
      }
    }
    throw new IOException("the router does not list " + node);
  }

  private static long calls(Map<String, Object> node) {
    long sum = 0;
    for (String counter : List.of("inFlight", "served", "failed", "cancelled")) {
      sum += ((Number) node.get(counter)).longValue();
    }
    return sum;
  }

  private interface Check {
    boolean ok() throws IOException;
  }

  private static void awaitTrue(Check check, String what) throws IOException {
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    while (System.nanoTime() < deadline) {
      try {
        if (check.ok()) {
          return;
        }
      } catch (IOException notYet) {
        // try again
      }
      Fleet.sleep(50);
    }
    throw new IOException(what + " was not ready within 120 s");
  }

  private static void log(String line) {
    System.err.println("[multi-turn] " + line);
  }
}
