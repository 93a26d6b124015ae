package io.kvbridge.sample.router;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.events.BlockHashes;
import io.kvbridge.events.EventAuthenticator;
import io.kvbridge.events.KvEvent;
import io.kvbridge.events.KvEventBatch;
import io.kvbridge.events.PrefixIndex;
import io.kvbridge.net.HandshakeSecret;
import io.kvbridge.sample.HttpApi;
import io.kvbridge.sample.SampleApplication;
import io.kvbridge.sample.SampleProperties;
import io.kvbridge.sample.broker.NatsEvents;
import io.kvbridge.sample.broker.NatsServer;
import io.kvbridge.sample.engine.Engine;
import io.kvbridge.sample.engine.ToyModel;
import io.kvbridge.sample.node.Node;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.json.JsonMapper;

/**
 * KV events through NATS JetStream: the nodes publish their batches and snapshots to a real NATS
 * server, the router reads them there (never from the nodes), and its index stays true through a
 * lost batch, a forged one, a router that starts late and the broker's restart.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KvEventsThroughNatsTest {

  private static final String SECRET = "the broker test's deployment secret";
  private static final EventAuthenticator AUTH = new EventAuthenticator(HandshakeSecret.of(SECRET));
  private static final JsonMapper JSON = JsonMapper.builder().build();
  private static final ToyModel REFERENCE = ToyModel.standard();

  private NatsServer broker;
  private ConfigurableApplicationContext app;
  private HttpApi api;
  private PdRouter router;
  private Engine decode;

  @BeforeAll
  void start() {
    broker = NatsServer.start();
    app =
        new SpringApplicationBuilder(SampleApplication.class)
            .run(
                "--server.port=0",
                "--spring.main.banner-mode=off",
                "--kvbridge.handshake.secret=" + SECRET,
                "--kvbridge.sample.events.nats.url=" + broker.url(),
                "--kvbridge.sample.events.nats.snapshot-interval=200ms",
                "--kvbridge.sample.prefill.engine-id=nats-prefill",
                "--kvbridge.sample.decode.engine-id=nats-decode",
                "--kvbridge.fake.fabric=kv-events-through-nats-test",
                "--kvbridge.sample.router.drop-after-prefill=0",
                "--kvbridge.sample.router.health-interval=200ms",
                "--kvbridge.sample.demo.enabled=false");
    api = new HttpApi(port());
    router = app.getBean(PdRouter.class);
    decode = app.getBean("decodeNode", Node.class).engine();
  }

  @AfterAll
  void stop() {
    if (app != null) {
      app.close();
    }
    if (broker != null) {
      broker.close();
    }
  }

  @Test
  @Order(1)
  void theRouterIndexesWhatTheNodesPublishToTheBrokerAndRoutesOnIt() {
    assertThat(index().source()).isEqualTo(broker.url().toString());
    String prompt = "Through the broker: a prompt long enough for several blocks of the cache.";
    assertThat(api.post("/v1/completions", request(prompt)).status()).isEqualTo(200);

    awaitIndexed(prompt);
    String again = prompt + " And one more question.";
    assertThat(api.post("/v1/completions", request(again)).text())
        .isEqualTo(REFERENCE.referenceCompletion(again, 3));
    assertThat(router.stats().prefixRouted()).isPositive();
    assertThat(index().unauthenticated()).isZero();
    assertThat(index().refusedBatches()).isZero();
  }

  @Test
  @Order(2)
  void aRouterThatStartsLateFindsEveryEnginesSnapshotAndTheBatchesAfterIt() {
    String prompt = "Before the second router: blocks it must learn from the broker alone.";
    assertThat(api.post("/v1/completions", request(prompt)).status()).isEqualTo(200);
    awaitIndexed(prompt);

    PrefixIndex late = new PrefixIndex(decode.shape().model().model(), tokensPerBlock());
    try (NatsEventFeeds feeds = feeds(late)) {
      feeds.follow(List.of(decodeNode()));

      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () ->
                  assertThat(late.blocksOf("nats-decode"))
                      .isEqualTo(decode.kvEvents().snapshot().blockHashes().size()));
      assertThat(late.match(hashes(prompt))).containsKey("nats-decode");
    }
  }

  @Test
  @Order(3)
  void aLostBatchIsFoundByItsNumberAndTheEnginesFreshSnapshotClosesTheGap() throws Exception {
    long gapsBefore = outcome(PrefixIndex.Outcome.GAP);
    long resyncsBefore = index().index().resyncs();
    long last = decode.kvEvents().sequence();
    // A batch numbered past the next: the ones between were lost on their way.
    publish(AUTH.signed(batch(last + 5)));

    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(outcome(PrefixIndex.Outcome.GAP)).isGreaterThan(gapsBefore);
              assertThat(index().index().resyncs()).isGreaterThan(resyncsBefore);
            });
    // The index follows the engine again.
    String prompt = "After the gap: a prompt whose blocks arrive as batches again, in order.";
    assertThat(api.post("/v1/completions", request(prompt)).status()).isEqualTo(200);
    awaitIndexed(prompt);
  }

  @Test
  @Order(4)
  void aForgedOrMalformedBatchOnTheBrokerIsRefusedCountedAndNeverApplied() throws Exception {
    long blocks = index().index().blocks();
    long unauthenticated = index().unauthenticated();
    long refused = index().refusedBatches();
    long next = decode.kvEvents().sequence() + 1;

    publish(batch(next).toMap()); // no mac
    Map<String, Object> wrongMac = batch(next).toMap();
    wrongMac.put(EventAuthenticator.FIELD, "00".repeat(32));
    publish(wrongMac);
    publish(Map.of("engine_id", "nats-decode", "seq", "not a number"));

    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(index().unauthenticated()).isEqualTo(unauthenticated + 2);
              assertThat(index().refusedBatches()).isEqualTo(refused + 1);
            });
    assertThat(index().index().blocks()).isEqualTo(blocks);
  }

  @Test
  @Order(5)
  void afterTheBrokerRestartsTheIndexCatchesUpWithWhatTheEnginesDidMeanwhile() {
    broker.stop();
    String prompt = "While the broker was down: blocks the index must still learn about.";
    assertThat(api.post("/v1/completions", request(prompt)).status()).isEqualTo(200);

    broker.restart();

    awaitIndexed(prompt);
    await()
        .atMost(Duration.ofSeconds(15))
        .untilAsserted(
            () ->
                assertThat(index().index().blocks())
                    .isEqualTo(
                        (long) decode.kvEvents().snapshot().blockHashes().size()
                            + prefillEngine().kvEvents().snapshot().blockHashes().size()));
  }

  /** Waits until the router knows a decode node that holds every full block of {@code prompt}. */
  private void awaitIndexed(String prompt) {
    long[] promptHashes = hashes(prompt);
    PrefixRouting routing = router.prefixRouting().orElseThrow();
    await()
        .atMost(Duration.ofSeconds(15))
        .untilAsserted(
            () ->
                assertThat(routing.cachedBlocks(router.decodePool(), promptHashes).values())
                    .contains(promptHashes.length));
  }

  private PrefixRouting.IndexStats index() {
    return router.stats().prefixIndex().orElseThrow();
  }

  private long outcome(PrefixIndex.Outcome outcome) {
    return index().index().outcomes().getOrDefault(outcome, 0L);
  }

  private KvEventBatch batch(long sequence) {
    return new KvEventBatch(
        "nats-decode",
        decode.kvEvents().incarnation(),
        sequence,
        List.of(new KvEvent.Removed(List.of(0x0123456789abcdefL))));
  }

  /** Publishes {@code map} on the decode engine's subject, as a publisher of the stream. */
  private void publish(Map<String, Object> map) throws Exception {
    try (NatsEvents nats = NatsEvents.connect(natsSettings(), "test publisher")) {
      nats.jetStream().publish(nats.subject("nats-decode"), JSON.writeValueAsBytes(map));
    }
  }

  private NatsEventFeeds feeds(PrefixIndex index) {
    return new NatsEventFeeds(
        index,
        NatsEvents.connect(natsSettings(), "test router"),
        JSON,
        Duration.ofSeconds(2),
        Optional.of(AUTH));
  }

  private SampleProperties.Nats natsSettings() {
    return app.getBean(SampleProperties.class).events().nats();
  }

  private PooledNode decodeNode() {
    return PooledNode.at(URI.create("http://127.0.0.1:" + port() + "/decode"), "/health");
  }

  private Engine prefillEngine() {
    return app.getBean("prefillNode", Node.class).engine();
  }

  private long[] hashes(String prompt) {
    return new BlockHashes(decode.shape().model().model(), tokensPerBlock())
        .of(ToyModel.tokensOf(prompt));
  }

  private int tokensPerBlock() {
    return decode.shape().tokensPerBlock();
  }

  private int port() {
    return Integer.parseInt(app.getEnvironment().getProperty("local.server.port"));
  }

  private static String request(String prompt) {
    return JSON.writeValueAsString(Map.of("prompt", prompt, "max_tokens", 3));
  }
}
