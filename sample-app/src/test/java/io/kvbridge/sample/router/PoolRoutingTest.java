package io.kvbridge.sample.router;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;
import static org.awaitility.Awaitility.await;

import io.kvbridge.lease.EndReason;
import io.kvbridge.sample.HttpApi;
import io.kvbridge.sample.SampleApplication;
import io.kvbridge.sample.completions.ClientConnection;
import io.kvbridge.sample.completions.CompletionRequest;
import io.kvbridge.sample.completions.CompletionResponse;
import io.kvbridge.sample.engine.ContextWindow;
import io.kvbridge.sample.engine.Engine;
import io.kvbridge.sample.engine.ToyModel;
import io.kvbridge.sample.node.Node;
import io.kvbridge.sample.node.NodeKind;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.json.JsonMapper;

/**
 * A router over pools of nodes: two prefill and two decode nodes, each an application of its own
 * (profile {@code prefill} or {@code decode}) in this JVM, moving KV through one shared-directory
 * fabric, and nodes that refuse every connection. Routers are built over chosen URLs, probed only
 * when a test says so.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PoolRoutingTest {

  private static final String PROMPT =
      "Pools of nodes: a router spreads prompts over prefill nodes and decode nodes alike.";
  private static final ToyModel REFERENCE = ToyModel.standard();

  /** Nothing listens there: every connection is refused. */
  private static final URI DEAD = URI.create("http://127.0.0.1:1");

  private final List<ConfigurableApplicationContext> nodes = new ArrayList<>();
  private final List<ConfigurableApplicationContext> routers = new ArrayList<>();
  private URI p0;
  private URI p1;
  private URI d0;
  private URI d1;

  @BeforeAll
  void startNodes(@TempDir Path fabric) {
    p0 = start("prefill", "pools-p0", fabric);
    p1 = start("prefill", "pools-p1", fabric);
    d0 = start("decode", "pools-d0", fabric);
    d1 = start("decode", "pools-d1", fabric);
  }

  @AfterAll
  void stop() {
    routers.forEach(ConfigurableApplicationContext::close);
    nodes.forEach(ConfigurableApplicationContext::close);
  }

  @Test
  void requestsSpreadEvenlyOverEveryPrefillAndEveryDecodeNode() {
    // The prompts share their first blocks: a prefix-aware router would send them where those are.
    ConfigurableApplicationContext router =
        startRouter(
            List.of(p0, p1), List.of(d0, d1), "--kvbridge.sample.router.prefix-aware=false");
    HttpApi api = new HttpApi(port(router));

    for (int i = 0; i < 8; i++) {
      String prompt = PROMPT + " Request " + i + ".";
      assertThat(api.post("/v1/completions", request(prompt, 5)).text())
          .isEqualTo(REFERENCE.referenceCompletion(prompt, 5));
    }

    RouterStats stats = router.getBean(PdRouter.class).stats();
    assertThat(stats.served()).isEqualTo(8);
    assertThat(stats.prefill()).extracting(NodeStats::served).containsExactly(4L, 4L);
    assertThat(stats.decode()).extracting(NodeStats::served).containsExactly(4L, 4L);
    for (URI decode : List.of(d0, d1)) {
      assertThat(engine(decode).stats().loadedTokens()).isPositive();
    }
  }

  @Test
  void aPromptSharingACachedPrefixGoesToTheNodesThatHoldIt() {
    // Never straight to the decode node: every turn goes through a prefill node.
    ConfigurableApplicationContext router =
        startRouter(
            List.of(p0, p1), List.of(d0, d1), "--kvbridge.sample.router.decode-alone-share=0");
    PdRouter pd = router.getBean(PdRouter.class);
    HttpApi api = new HttpApi(port(router));
    String system =
        "A system prompt every turn of this conversation starts with, several blocks long. ";
    long before = pd.stats().prefixIndex().orElseThrow().index().blocks();
    int blocks = system.length() / engine(d0).shape().tokensPerBlock();

    assertThat(api.post("/v1/completions", request(system + "Turn 0.", 3)).status()).isEqualTo(200);
    // The nodes that served the first turn; each keeps its blocks once the lease ends.
    int decodeHolder = pd.stats().decode().get(0).served() == 1 ? 0 : 1;
    int prefillHolder = pd.stats().prefill().get(0).served() == 1 ? 0 : 1;
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> pd.stats().prefixIndex().orElseThrow().index().blocks() >= before + 2L * blocks);
    for (int turn = 1; turn <= 4; turn++) {
      String prompt = system + "Turn " + turn + ".";
      assertThat(api.post("/v1/completions", request(prompt, 3)).text())
          .isEqualTo(REFERENCE.referenceCompletion(prompt, 3));
    }

    RouterStats stats = pd.stats();
    assertThat(stats.decode().get(decodeHolder).served()).isEqualTo(5);
    assertThat(stats.decode().get(1 - decodeHolder).served()).isZero();
    assertThat(stats.prefill().get(prefillHolder).served()).isEqualTo(5);
    assertThat(stats.prefill().get(1 - prefillHolder).served()).isZero();
    assertThat(stats.prefixRouted()).isEqualTo(4);
    assertThat(stats.prefillPrefixRouted()).isEqualTo(4);
    assertThat(stats.decodedAlone()).isZero();
    assertThat(stats.decisions().count()).isEqualTo(5);
    assertThat(stats.decisions().maxMicros()).isPositive();
  }

  @Test
  void aDecodeNodeHoldingEnoughOfThePromptServesItAloneWithoutALease() {
    ConfigurableApplicationContext router = startRouter(List.of(p0, p1), List.of(d0, d1));
    PdRouter pd = router.getBean(PdRouter.class);
    HttpApi api = new HttpApi(port(router));
    String system = "Served alone: a shared preamble of some blocks that the decode node keeps. ";
    long before = pd.stats().prefixIndex().orElseThrow().index().blocks();
    int blocks = system.length() / engine(d0).shape().tokensPerBlock();
    assertThat(api.post("/v1/completions", request(system + "First.", 3)).status()).isEqualTo(200);
    int holder = pd.stats().decode().get(0).served() == 1 ? 0 : 1;
    // Both the prefill node and the decode node keep the first turn's blocks.
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> pd.stats().prefixIndex().orElseThrow().index().blocks() >= before + 2L * blocks);
    long leases = leasesGranted(p0) + leasesGranted(p1);
    long computedBefore = engine(holder == 0 ? d0 : d1).stats().computedTokens();

    String next = system + "Second, which the decode node computes itself.";
    Map<String, Object> answer = api.post("/v1/completions", request(next, 3)).json();

    assertThat(list(answer, "choices").get(0))
        .containsEntry("text", REFERENCE.referenceCompletion(next, 3));
    RouterStats stats = pd.stats();
    assertThat(stats.decodedAlone()).isEqualTo(1);
    assertThat(stats.decode().get(holder).served()).isEqualTo(2);
    assertThat(stats.prefill()).extracting(NodeStats::served).containsExactlyInAnyOrder(1L, 0L);
    assertThat(leasesGranted(p0) + leasesGranted(p1)).isEqualTo(leases);
    Map<String, Object> kv = map(answer, "kvbridge");
    assertThat(((Number) kv.get("cached_tokens")).intValue())
        .isGreaterThanOrEqualTo(system.length() / 2);
    assertThat(engine(holder == 0 ? d0 : d1).stats().computedTokens())
        .isGreaterThan(computedBefore);

    // A prompt sharing less than half of its full blocks goes through a prefill node.
    String other =
        system.substring(0, 20) + "then nothing any node holds, for several more blocks.";
    assertThat(api.post("/v1/completions", request(other, 3)).text())
        .isEqualTo(REFERENCE.referenceCompletion(other, 3));
    assertThat(pd.stats().decodedAlone()).isEqualTo(1);
    assertThat(leasesGranted(p0) + leasesGranted(p1)).isEqualTo(leases + 1);
  }

  @Test
  void theRoutersInfoShowsEachNodesHealthAndCalls() {
    ConfigurableApplicationContext router = startRouter(List.of(p0), List.of(d0));
    HttpApi api = new HttpApi(port(router));
    // A prompt no node holds: it goes through the prefill node.
    api.post("/v1/completions", request("The router's info, after one request.", 3)).text();

    Map<String, Object> info = map(api.get("/actuator/info").json(), "kvbridgeRouter");

    assertThat(info).containsEntry("requests", 1).containsEntry("served", 1);
    assertThat(list(info, "prefill"))
        .containsExactly(
            Map.of(
                "url",
                p0.toString(),
                "healthy",
                true,
                "health",
                "not probed yet",
                "inFlight",
                0,
                "served",
                1,
                "failed",
                0,
                "cancelled",
                0));
    assertThat(list(info, "decode"))
        .singleElement()
        .satisfies(
            node ->
                assertThat(node).containsEntry("url", d0.toString()).containsEntry("served", 1));
  }

  @Test
  void aPrefillNodeThatRefusesConnectionsIsRetriedOnAnotherAndSkippedAfterwards() throws Exception {
    PdRouter router = router(List.of(DEAD, p0, p1), List.of(d0, d1));

    CompletionResponse first = route(router, PROMPT).get(30, TimeUnit.SECONDS);
    for (int i = 0; i < 4; i++) {
      route(router, PROMPT + i).get(30, TimeUnit.SECONDS);
    }

    assertThat(first.text()).isEqualTo(REFERENCE.referenceCompletion(PROMPT, 4));
    NodeStats dead = router.stats().prefill().get(0);
    assertThat(dead.healthy()).isFalse();
    assertThat(dead.health())
        .startsWith("prefill node at " + DEAD + "/v1/completions could not be reached");
    assertThat(dead.failed()).isEqualTo(1);
    assertThat(router.stats().prefill()).extracting(NodeStats::served).containsExactly(0L, 2L, 3L);
    assertThat(router.stats().served()).isEqualTo(5);
  }

  @Test
  void aPrefillNodeWhoseHealthIsNotUpIsNeverCalled() throws Exception {
    PdRouter router = router(List.of(DEAD, p0), List.of(d0));

    probeTwice(router);
    for (int i = 0; i < 3; i++) {
      route(router, PROMPT + i).get(30, TimeUnit.SECONDS);
    }

    NodeStats dead = router.stats().prefill().get(0);
    assertThat(dead.healthy()).isFalse();
    assertThat(dead.health())
        .startsWith("health at " + DEAD + "/actuator/health could not be reached");
    assertThat(dead.failed()).isZero();
    assertThat(router.stats().prefill().get(1).health()).isEqualTo("health UP");
    assertThat(router.stats().prefill().get(1).served()).isEqualTo(3);
  }

  @Test
  void withEveryDecodeNodeDownTheRouterAnswers503AtOnceWithoutCallingAPrefillNode() {
    ConfigurableApplicationContext router =
        startRouter(List.of(p0, p1), List.of(DEAD.resolve("/first"), DEAD.resolve("/second")));
    probeTwice(router.getBean(PdRouter.class));
    long prefilled = engine(p0).stats().completed() + engine(p1).stats().completed();
    long leases = leasesGranted(p0) + leasesGranted(p1);

    HttpApi.Answer answer = new HttpApi(port(router)).post("/v1/completions", request(PROMPT, 3));

    Map<String, Object> error = answer.error(503);
    assertThat(error).containsEntry("type", "decode_pool_unavailable");
    assertThat((String) error.get("message"))
        .startsWith("no decode node is healthy (" + DEAD.resolve("/first") + ": health at ")
        .contains(DEAD.resolve("/second") + ": health at ")
        .contains("no prefill node was called");
    assertThat(engine(p0).stats().completed() + engine(p1).stats().completed())
        .isEqualTo(prefilled);
    assertThat(leasesGranted(p0) + leasesGranted(p1)).isEqualTo(leases);
    assertThat(router.getBean(PdRouter.class).stats().prefill())
        .extracting(NodeStats::served, NodeStats::failed)
        .containsOnly(tuple(0L, 0L));
  }

  @Test
  void aDecodeNodeUpAgainIsUsedByTheNextRequestsRatherThanAfterTheNextScheduledProbe()
      throws Exception {
    try (HoldingProxy decode = HoldingProxy.start()) {
      PdRouter router = router(List.of(p0), List.of(decode.url()));
      // The decode node is away: two probes find it so.
      probeTwice(router);
      assertThat(router.stats().decode()).extracting(NodeStats::healthy).containsExactly(false);

      // It is back (restarted), and requests arrive before any scheduled probe.
      decode.target(d0);
      List<CompletableFuture<CompletionResponse>> routed = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        routed.add(route(router, PROMPT + " Back again " + i + "."));
      }

      for (int i = 0; i < 20; i++) {
        assertThat(routed.get(i).get(30, TimeUnit.SECONDS).text())
            .isEqualTo(REFERENCE.referenceCompletion(PROMPT + " Back again " + i + ".", 4));
      }
      assertThat(router.stats().decode())
          .extracting(NodeStats::healthy, NodeStats::health, NodeStats::served)
          .containsExactly(tuple(true, "health UP", 20L));
    }
  }

  @Test
  void aDecodeNodeStillDownWhenARequestProbesItIsA503NamingTheProbesReason() {
    try (HoldingProxy decode = HoldingProxy.start()) {
      PdRouter router = router(List.of(p0), List.of(decode.url()));
      probeTwice(router);
      long prefilled = engine(p0).stats().completed();

      assertThat(route(router, PROMPT))
          .failsWithin(Duration.ofSeconds(30))
          .withThrowableOfType(ExecutionException.class)
          .havingCause()
          .isInstanceOfSatisfying(
              NoHealthyNodeException.class,
              e -> assertThat(e.type()).isEqualTo("decode_pool_unavailable"))
          .withMessageStartingWith("no decode node is healthy (" + decode.url() + ": health at ")
          .withMessageContaining("no prefill node was called");
      assertThat(engine(p0).stats().completed()).isEqualTo(prefilled);
    }
  }

  @Test
  void withEveryPrefillNodeDownTheRouterAnswers503NamingThem() throws Exception {
    PdRouter router = router(List.of(DEAD), List.of(d0));
    probeTwice(router);

    assertThat(route(router, PROMPT))
        .failsWithin(Duration.ofSeconds(30))
        .withThrowableOfType(ExecutionException.class)
        .havingCause()
        .isInstanceOfSatisfying(
            NoHealthyNodeException.class,
            e -> assertThat(e.type()).isEqualTo("prefill_pool_unavailable"))
        .withMessageStartingWith("no prefill node is healthy (" + DEAD + ": health at ");
  }

  @Test
  void aDecodeNodeThatRefusesConnectionsIsRetriedOnAnotherWithTheSameParameters() throws Exception {
    PdRouter router = router(List.of(p0), List.of(DEAD, d1));
    long read = leasesEnded(p0, EndReason.READ);

    CompletionResponse answer = route(router, PROMPT).get(30, TimeUnit.SECONDS);

    assertThat(answer.text()).isEqualTo(REFERENCE.referenceCompletion(PROMPT, 4));
    assertThat(answer.kvbridge().engineId()).isEqualTo("pools-d1");
    assertThat(leasesEnded(p0, EndReason.READ)).isEqualTo(read + 1);
    assertThat(router.stats().decode())
        .extracting(NodeStats::healthy, NodeStats::failed, NodeStats::served)
        .containsExactly(tuple(false, 1L, 0L), tuple(true, 0L, 1L));
  }

  @Test
  void whenNoDecodeNodeCanBeReachedAfterPrefillThePrefillLeaseIsRevokedAtOnce() {
    PdRouter router = router(List.of(p1), List.of(DEAD));
    long revoked = leasesEnded(p1, EndReason.REVOKED);

    assertThat(route(router, PROMPT))
        .failsWithin(Duration.ofSeconds(30))
        .withThrowableOfType(ExecutionException.class)
        .havingCause()
        .isInstanceOfSatisfying(
            NodeCallFailedException.class, e -> assertThat(e.status()).isEqualTo(502))
        .withMessageStartingWith("decode node at " + DEAD + "/v1/completions could not be reached");
    assertThat(leasesEnded(p1, EndReason.REVOKED)).isEqualTo(revoked + 1);
  }

  private URI start(String profile, String engineId, Path fabric) {
    ConfigurableApplicationContext node =
        new SpringApplicationBuilder(SampleApplication.class)
            .profiles(profile)
            .run(
                "--server.port=0",
                "--kvbridge.engine-id=" + engineId,
                "--kvbridge.sample." + profile + ".engine-id=" + engineId,
                "--kvbridge.fake.shared-dir=" + fabric,
                "--kvbridge.lease.duration=60s",
                "--kvbridge.lease.max-lifetime=120s",
                "--spring.main.banner-mode=off");
    nodes.add(node);
    return URI.create("http://127.0.0.1:" + port(node));
  }

  private ConfigurableApplicationContext startRouter(
      List<URI> prefill, List<URI> decode, String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--server.port=0",
                "--kvbridge.sample.router.prefill-urls=" + joined(prefill),
                "--kvbridge.sample.router.decode-urls=" + joined(decode),
                "--kvbridge.sample.router.health-interval=1h",
                "--spring.main.banner-mode=off"));
    args.addAll(List.of(more));
    ConfigurableApplicationContext router =
        new SpringApplicationBuilder(SampleApplication.class)
            .profiles("router")
            .run(args.toArray(String[]::new));
    routers.add(router);
    return router;
  }

  private static PdRouter router(List<URI> prefill, List<URI> decode) {
    return new PdRouter(
        new NodeClient(
            JsonMapper.shared(),
            Duration.ofSeconds(2),
            Duration.ofSeconds(30),
            Duration.ofSeconds(2)),
        new ContextWindow(ContextWindow.DEFAULT_TOKENS),
        new NodePool(NodeKind.PREFILL, pooled(prefill)),
        new NodePool(NodeKind.DECODE, pooled(decode)),
        new DropAfterPrefill(0));
  }

  private static List<PooledNode> pooled(List<URI> urls) {
    return urls.stream().map(url -> PooledNode.at(url, "/actuator/health")).toList();
  }

  /** Two probes in a row: enough to mark down a node that is not UP. */
  private static void probeTwice(PdRouter router) {
    router.probe().join();
    router.probe().join();
  }

  private static CompletableFuture<CompletionResponse> route(PdRouter router, String prompt) {
    return router.route(CompletionRequest.of("m", prompt, 4), ClientConnection.stays());
  }

  private Engine engine(URI node) {
    int port = node.getPort();
    return nodes.stream()
        .filter(context -> port(context) == port)
        .flatMap(context -> context.getBeansOfType(Node.class).values().stream())
        .findFirst()
        .orElseThrow()
        .engine();
  }

  private long leasesGranted(URI prefill) {
    return engine(prefill).connector().status().producer().orElseThrow().leasesGranted();
  }

  private long leasesEnded(URI prefill, EndReason reason) {
    return engine(prefill)
        .connector()
        .status()
        .producer()
        .orElseThrow()
        .leasesEnded()
        .getOrDefault(reason, 0L);
  }

  private static int port(ConfigurableApplicationContext context) {
    return Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
  }

  private static String joined(List<URI> urls) {
    return urls.stream().map(URI::toString).collect(Collectors.joining(","));
  }

  private static String request(String prompt, int maxTokens) {
    return JsonMapper.shared()
        .writeValueAsString(Map.of("prompt", prompt, "max_tokens", maxTokens));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Map<String, Object> json, String key) {
    return (Map<String, Object>) json.get(key);
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> list(Map<String, Object> json, String key) {
    return (List<Map<String, Object>>) json.get(key);
  }
}
