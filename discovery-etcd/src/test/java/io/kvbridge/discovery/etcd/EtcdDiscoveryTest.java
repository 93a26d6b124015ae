package io.kvbridge.discovery.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.LeaseOption;
import io.kvbridge.discovery.etcd.testing.EtcdServer;
import io.kvbridge.fake.FakeTransportProvider;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.lease.EndReason;
import io.kvbridge.runtime.ConnectorRegistry;
import io.kvbridge.runtime.PullConnector;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TransferParams;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Engines registered in a real etcd (started on loopback for each test), each "process" with its
 * own {@link EtcdDiscovery}, moving KV over the in-JVM fake transport. etcd's lease times are real
 * time: they are kept at one or two seconds.
 */
class EtcdDiscoveryTest {

  private static final Duration TTL = Duration.ofSeconds(1);

  private final String fabric = "etcd-" + UUID.randomUUID();
  private final List<AutoCloseable> open = new ArrayList<>();
  private EtcdServer etcd;
  private Client raw;

  @BeforeEach
  void startEtcd() {
    etcd = EtcdServer.start();
    raw = Client.builder().endpoints(etcd.endpoint()).build();
  }

  @AfterEach
  void stopEverything() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
    raw.close();
    etcd.close();
  }

  // ---------------------------------------------------------------- registration

  @Test
  void producerRegistersEveryFieldUnderItsEngineIdBoundToALeaseOfItsTtl() throws Exception {
    EtcdDiscovery discovery = discovery(TTL);
    Engine producer = engine("prefill-0", Role.PRODUCER, discovery, engineId -> OptionalInt.of(17));

    KeyValue kv = awaitKey("/kvbridge/engines/prefill-0");
    EngineRecord record = EngineRecord.fromJson("prefill-0", kv.getValue().getBytes());

    assertThat(record.engineId()).isEqualTo("prefill-0");
    assertThat(record.role()).isEqualTo(Role.PRODUCER);
    assertThat(record.incarnation()).isEqualTo(producer.connector.settings().incarnation());
    assertThat(record.handshakeAddress())
        .isEqualTo(producer.connector.status().producer().orElseThrow().handshakeAddress())
        .isPresent();
    assertThat(record.agentName())
        .contains(((PullConnector) producer.unregistered).transport().agentName());
    assertThat(record.layoutFingerprint()).isEqualTo(Engine.LAYOUT.fingerprint());
    assertThat(record.tensorParallelDegree()).isEqualTo(1);
    assertThat(record.freeBlocks()).hasValue(17);
    assertThat(record.liveLeases()).isZero();
    assertThat(kv.getLease()).isNotZero();
    assertThat(
            raw.getLeaseClient()
                .timeToLive(kv.getLease(), LeaseOption.DEFAULT)
                .get(5, TimeUnit.SECONDS)
                .getGrantedTTL())
        .isEqualTo(TTL.getSeconds());
  }

  @Test
  void aTensorParallelEnginePublishesItsDegreeAndTheFingerprintEveryRankShares() {
    EtcdDiscovery discovery = discovery(TTL);
    KvLayout model =
        new KvLayout("etcd-test/tp2", 2, 2, 2, 4, 0, 4, 8, 4, 32, KvLayout.MemoryOrder.HEAD_MAJOR);
    ConnectorSettings settings =
        ConnectorSettings.builder(FakeTransportProvider.TYPE, "prefill-tp2")
            .role(Role.PRODUCER)
            .tpDegree(2)
            .peerDirectory(discovery)
            .properties(Map.of(FakeTransportProvider.FABRIC, fabric))
            .build();
    KvConnector connector =
        discovery.register(
            ConnectorRegistry.of(List.of(new FakeTransportProvider())).create(settings),
            EngineLoad.UNKNOWN);
    open.add(connector);
    for (int rank = 0; rank < 2; rank++) {
      KvLayout share = model.forRank(rank, 2);
      connector.worker(rank).registerKvCache(connector.worker(rank).allocateKvCache(share), share);
    }

    EngineRecord record =
        EngineRecord.fromJson(
            "prefill-tp2", awaitKey("/kvbridge/engines/prefill-tp2").getValue().getBytes());

    assertThat(record.tensorParallelDegree()).isEqualTo(2);
    // The model's fingerprint: the heads a rank holds and its block size are not part of it.
    assertThat(record.layoutFingerprint())
        .isEqualTo(model.forRank(0, 2).fingerprint())
        .isEqualTo(model.forRank(1, 2).fingerprint())
        .isEqualTo(model.withTokensPerBlock(8).fingerprint());
  }

  @Test
  void registrationIsRefreshedWhenTheEnginesLoadChanges() {
    EtcdDiscovery discovery = discovery(TTL);
    Engine producer = engine("prefill-0", Role.PRODUCER, discovery, EngineLoad.UNKNOWN);
    awaitKey("/kvbridge/engines/prefill-0");

    producer.prefill("p-1", List.of(1, 2));

    patiently()
        .untilAsserted(
            () ->
                assertThat(read("/kvbridge/engines/prefill-0"))
                    .hasValueSatisfying(r -> assertThat(r.liveLeases()).isEqualTo(1)));
    assertThat(read("/kvbridge/engines/prefill-0").orElseThrow().freeBlocks()).isEmpty();
  }

  @Test
  void consumerRegistersWithoutAHandshakeAddress() {
    EtcdDiscovery discovery = discovery(TTL);
    engine("decode-0", Role.CONSUMER, discovery, EngineLoad.UNKNOWN);

    awaitKey("/kvbridge/engines/decode-0");

    EngineRecord record = read("/kvbridge/engines/decode-0").orElseThrow();
    assertThat(record.role()).isEqualTo(Role.CONSUMER);
    assertThat(record.handshakeAddress()).isEmpty();
  }

  @Test
  void closingTheConnectorRemovesItsKeyBeforeItReturns() {
    EtcdDiscovery discovery = discovery(Duration.ofSeconds(30));
    Engine producer = engine("prefill-0", Role.PRODUCER, discovery, EngineLoad.UNKNOWN);
    awaitKey("/kvbridge/engines/prefill-0");

    producer.connector.close();

    assertThat(keys()).doesNotContain("/kvbridge/engines/prefill-0");
  }

  @Test
  void closingDiscoveryRemovesEveryLocalEnginesKey() {
    EtcdDiscovery discovery = discovery(Duration.ofSeconds(30));
    engine("prefill-0", Role.PRODUCER, discovery, EngineLoad.UNKNOWN);
    engine("decode-0", Role.CONSUMER, discovery, EngineLoad.UNKNOWN);
    awaitKey("/kvbridge/engines/prefill-0");
    awaitKey("/kvbridge/engines/decode-0");

    discovery.close();

    assertThat(keys()).isEmpty();
  }

  @Test
  void engineLoadThatFailsIsPublishedAsUnknown() {
    EtcdDiscovery discovery = discovery(TTL);
    engine(
        "prefill-0",
        Role.PRODUCER,
        discovery,
        engineId -> {
          throw new IllegalStateException("the pool is being resized");
        });

    KeyValue kv = awaitKey("/kvbridge/engines/prefill-0");

    assertThat(EngineRecord.fromJson("prefill-0", kv.getValue().getBytes()).freeBlocks()).isEmpty();
  }

  @Test
  void registrationCarriesTheApplicationsAttributesAndTheirChanges() {
    EtcdDiscovery discovery = discovery(TTL);
    Map<String, String> said = new java.util.concurrent.ConcurrentHashMap<>();
    Engine producer =
        Engine.start(
            "prefill-0", Role.PRODUCER, fabric, discovery, EngineLoad.UNKNOWN, engineId -> said);
    open.add(producer);
    awaitKey("/kvbridge/engines/prefill-0");

    said.put("base_url", "http://10.0.0.5:8100");

    patiently()
        .untilAsserted(
            () ->
                assertThat(read("/kvbridge/engines/prefill-0"))
                    .hasValueSatisfying(
                        r -> assertThat(r.attribute("base_url")).contains("http://10.0.0.5:8100")));
  }

  @Test
  void attributesBeyondTheLimitsArePublishedAsNone() {
    EtcdDiscovery discovery = discovery(TTL);
    Engine producer =
        Engine.start(
            "prefill-0",
            Role.PRODUCER,
            fabric,
            discovery,
            EngineLoad.UNKNOWN,
            engineId -> Map.of("base_url", "x".repeat(EngineRecord.MAX_ATTRIBUTE_VALUE + 1)));
    open.add(producer);

    KeyValue kv = awaitKey("/kvbridge/engines/prefill-0");

    assertThat(EngineRecord.fromJson("prefill-0", kv.getValue().getBytes()).attributes()).isEmpty();
  }

  @Test
  void listenerSeesEnginesAppearAndTheKeyOfADeadProcessVanish() throws Exception {
    EtcdDiscovery router = discovery(TTL);
    List<java.util.Set<String>> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    AutoCloseable listening = router.onEnginesChanged(engines -> seen.add(engines.keySet()));
    open.add(listening);
    EtcdDiscovery prefillSide = discovery(TTL);
    engine("prefill-0", Role.PRODUCER, prefillSide, EngineLoad.UNKNOWN);
    engine("decode-0", Role.CONSUMER, discovery(TTL), EngineLoad.UNKNOWN);

    patiently().until(() -> !seen.isEmpty() && seen.get(seen.size() - 1).size() == 2);
    prefillSide.halt(); // nobody renews prefill-0's lease any more

    patiently()
        .untilAsserted(() -> assertThat(seen.get(seen.size() - 1)).containsExactly("decode-0"));
    assertThat(seen.get(0)).as("the view when the listener was added").isEmpty();
  }

  @Test
  void twoProcessesRunningOneEngineIdAreWarnedOf() {
    try (LogLines log = new LogLines()) {
      engine("prefill-0", Role.PRODUCER, discovery(TTL), EngineLoad.UNKNOWN);
      awaitKey("/kvbridge/engines/prefill-0");

      // A consumer: in one JVM, a second producer could not answer handshakes under that id.
      engine("prefill-0", Role.CONSUMER, discovery(TTL), EngineLoad.UNKNOWN);

      patiently()
          .until(
              () -> !log.at(Level.WARNING, "is registered in etcd by another process").isEmpty());
      assertThat(log.at(Level.WARNING, "engine ids must be unique")).isNotEmpty();
    }
  }

  @Test
  void keyDeletedByHandWhileTheEngineRunsIsWrittenAgain() throws Exception {
    EtcdDiscovery discovery = discovery(TTL);
    engine("prefill-0", Role.PRODUCER, discovery, EngineLoad.UNKNOWN);
    awaitKey("/kvbridge/engines/prefill-0");

    raw.getKVClient().delete(bytes("/kvbridge/engines/prefill-0")).get(5, TimeUnit.SECONDS);

    awaitKey("/kvbridge/engines/prefill-0");
  }

  // ---------------------------------------------------------------- the directory

  @Test
  void consumerFindsAProducerThatParamsDoNotLocateThroughEtcd() {
    Engine producer = engine("prefill-0", Role.PRODUCER, discovery(TTL), EngineLoad.UNKNOWN);
    EtcdDiscovery decodeSide = discovery(TTL);
    Engine consumer = engine("decode-0", Role.CONSUMER, decodeSide, EngineLoad.UNKNOWN);
    patiently().until(() -> decodeSide.handshakeAddress("prefill-0").isPresent());
    Map<Integer, byte[]> written = producer.fill(List.of(3, 4));
    TransferParams params = withoutHandshakeAddress(producer.prefill("p-1", List.of(3, 4)));

    consumer.load(producer, "d-1", params, List.of(10, 11));

    assertThat(consumer.received).contains("d-1");
    assertThat(consumer.block(10)).isEqualTo(written.get(3));
    assertThat(consumer.block(11)).isEqualTo(written.get(4));
    assertThat(decodeSide.handshakeAddress("prefill-0"))
        .isEqualTo(producer.connector.status().producer().orElseThrow().handshakeAddress());
  }

  @Test
  void directoryNamesNoAddressForAConsumer() {
    EtcdDiscovery discovery = discovery(TTL);
    engine("decode-0", Role.CONSUMER, discovery, EngineLoad.UNKNOWN);

    patiently().until(() -> discovery.engines().containsKey("decode-0"));

    assertThat(discovery.handshakeAddress("decode-0")).isEmpty();
    assertThat(discovery.handshakeAddress("nobody")).isEmpty();
  }

  // ---------------------------------------------------------------- gone peers

  @Test
  void loadsWaitingOnAProducerWhoseProcessDiedFailAtOnceWhenItsKeyExpires() {
    EtcdDiscovery prefillSide = discovery(TTL);
    Engine producer = engine("prefill-0", Role.PRODUCER, prefillSide, EngineLoad.UNKNOWN);
    Engine consumer = engine("decode-0", Role.CONSUMER, discovery(TTL), EngineLoad.UNKNOWN);
    awaitKey("/kvbridge/engines/prefill-0");
    consumer.confirm(producer, "d-1", producer.prefill("p-1", List.of(1)), List.of(5));

    prefillSide.halt(); // the producer's process dies: nobody renews its lease any more

    patiently().until(() -> consumer.drain().failed.containsKey("d-1"));
    assertThat(consumer.failed.get("d-1").reason())
        .contains("prefill-0 is gone")
        .contains("etcd registration was deleted");
    assertThat(consumer.failed.get("d-1").localBlockIds()).containsExactly(5);
    assertThat(consumer.connector.status().consumer().orElseThrow().producers())
        .noneMatch(p -> p.engineId().equals("prefill-0"));
  }

  @Test
  void producerRevokesOnlyTheLeasesAConsumerWhoseProcessDiedKeptAlive() {
    Engine producer = engine("prefill-0", Role.PRODUCER, discovery(TTL), EngineLoad.UNKNOWN);
    EtcdDiscovery decodeSide = discovery(TTL);
    Engine consumer = engine("decode-0", Role.CONSUMER, decodeSide, EngineLoad.UNKNOWN);
    consumer.confirm(producer, "d-1", producer.prefill("p-1", List.of(1)), List.of(5));
    producer.prefill("p-unclaimed", List.of(2));
    awaitKey("/kvbridge/engines/decode-0");

    decodeSide.halt();

    patiently().until(() -> producer.drain().sent.contains("p-1"));
    assertThat(producer.sent).doesNotContain("p-unclaimed");
    assertThat(producer.connector.status().producer().orElseThrow().liveLeases()).isEqualTo(1);
    assertThat(producer.connector.status().producer().orElseThrow().leasesEnded())
        .containsEntry(EndReason.REVOKED, 1L);
  }

  @Test
  void engineThatShutsDownIsGoneForItsPeersAtOnce() {
    Engine producer = engine("prefill-0", Role.PRODUCER, discovery(TTL), EngineLoad.UNKNOWN);
    EtcdDiscovery decodeSide = discovery(Duration.ofSeconds(30));
    Engine consumer = engine("decode-0", Role.CONSUMER, decodeSide, EngineLoad.UNKNOWN);
    consumer.confirm(producer, "d-1", producer.prefill("p-1", List.of(1)), List.of(5));
    awaitKey("/kvbridge/engines/decode-0");

    consumer.connector.close();

    patiently().until(() -> producer.drain().sent.contains("p-1"));
    assertThat(producer.connector.status().producer().orElseThrow().leasesEnded())
        .containsEntry(EndReason.REVOKED, 1L);
  }

  // ---------------------------------------------------------------- etcd down and back

  @Test
  void whileEtcdIsDownEnginesKeepServingNothingIsFreedAndEachLogsItOnce() {
    Duration ttl = Duration.ofSeconds(2);
    EtcdDiscovery prefillSide = discovery(ttl);
    EtcdDiscovery decodeSide = discovery(ttl);
    Engine producer = engine("prefill-0", Role.PRODUCER, prefillSide, EngineLoad.UNKNOWN);
    Engine consumer = engine("decode-0", Role.CONSUMER, decodeSide, EngineLoad.UNKNOWN);
    patiently().until(() -> decodeSide.handshakeAddress("prefill-0").isPresent());
    consumer.confirm(producer, "d-held", producer.prefill("p-held", List.of(1)), List.of(5));
    try (LogLines log = new LogLines()) {

      etcd.stop();
      patiently()
          .until(() -> !prefillSide.status().connected() && !decodeSide.status().connected());

      // Several times the registrations' time to live: nothing expires, nothing is freed.
      await()
          .during(ttl.multipliedBy(3))
          .atMost(ttl.multipliedBy(5))
          .until(
              () -> {
                producer.drain();
                consumer.drain();
                return consumer.failed.isEmpty() && producer.sent.isEmpty();
              });
      Map<Integer, byte[]> written = producer.fill(List.of(7));
      consumer.load(
          producer,
          "d-new",
          withoutHandshakeAddress(producer.prefill("p-new", List.of(7))),
          List.of(20));

      // The step that started the new load started the held one too: both were served.
      assertThat(consumer.received).contains("d-new", "d-held");
      assertThat(consumer.block(20)).isEqualTo(written.get(7));
      assertThat(consumer.failed).isEmpty();
      assertThat(producer.connector.status().producer().orElseThrow().leasesEnded())
          .containsEntry(EndReason.READ, 2L)
          .containsEntry(EndReason.REVOKED, 0L)
          .containsEntry(EndReason.EXPIRED, 0L);
      assertThat(log.at(Level.WARNING, "is unreachable")).hasSize(2); // one per process
      assertThat(prefillSide.status().problem()).get().asString().contains("unreachable");
    }
  }

  @Test
  void whenEtcdIsBackEveryEngineIsRegisteredAgainAndNobodyIsGone() {
    // etcd gives every lease its full time to live again when it is back: each process must
    // reconnect within it, which a loaded machine may delay by a second or so.
    Duration ttl = Duration.ofSeconds(3);
    EtcdDiscovery prefillSide = discovery(ttl);
    EtcdDiscovery decodeSide = discovery(ttl);
    Engine producer = engine("prefill-0", Role.PRODUCER, prefillSide, EngineLoad.UNKNOWN);
    Engine consumer = engine("decode-0", Role.CONSUMER, decodeSide, EngineLoad.UNKNOWN);
    awaitKey("/kvbridge/engines/prefill-0");
    awaitKey("/kvbridge/engines/decode-0");
    consumer.confirm(producer, "d-held", producer.prefill("p-held", List.of(1)), List.of(5));
    try (LogLines log = new LogLines()) {
      etcd.stop();
      patiently().until(() -> !prefillSide.status().connected());

      etcd.restart();

      patiently().until(() -> prefillSide.status().healthy() && decodeSide.status().healthy());
      assertThat(keys())
          .containsExactlyInAnyOrder("/kvbridge/engines/prefill-0", "/kvbridge/engines/decode-0");
      producer.drain();
      consumer.drain();
      assertThat(consumer.failed).isEmpty();
      assertThat(producer.sent).isEmpty();
      assertThat(log.at(Level.INFO, "is reachable again")).hasSize(2);
      assertThat(log.at(Level.INFO, "is gone")).isEmpty();
    }
  }

  @Test
  void whenEtcdComesBackWithoutItsDataEnginesRegisterAgainAndNobodyIsGone() {
    try (LogLines log = new LogLines()) {
      EtcdDiscovery prefillSide = discovery(TTL);
      EtcdDiscovery decodeSide = discovery(TTL);
      Engine producer = engine("prefill-0", Role.PRODUCER, prefillSide, EngineLoad.UNKNOWN);
      Engine consumer = engine("decode-0", Role.CONSUMER, decodeSide, EngineLoad.UNKNOWN);
      awaitKey("/kvbridge/engines/prefill-0");
      awaitKey("/kvbridge/engines/decode-0");
      consumer.confirm(producer, "d-held", producer.prefill("p-held", List.of(1)), List.of(5));
      etcd.stop();
      patiently().until(() -> !prefillSide.status().connected());

      etcd.restartEmpty();

      raw.close();
      raw = Client.builder().endpoints(etcd.endpoint()).build();
      patiently()
          .untilAsserted(
              () ->
                  assertThat(keys())
                      .containsExactlyInAnyOrder(
                          "/kvbridge/engines/prefill-0", "/kvbridge/engines/decode-0"));
      patiently().until(() -> prefillSide.status().healthy() && decodeSide.status().healthy());
      producer.drain();
      consumer.drain();
      assertThat(consumer.failed).isEmpty();
      assertThat(producer.sent).isEmpty();
      assertThat(log.at(Level.INFO, "is gone")).isEmpty();
    }
  }

  // ---------------------------------------------------------------- helpers

  private EtcdDiscovery discovery(Duration ttl) {
    EtcdDiscovery discovery =
        EtcdDiscovery.start(EtcdDiscoverySettings.of(List.of(etcd.endpoint())).withTtl(ttl));
    open.add(discovery);
    return discovery;
  }

  private Engine engine(String engineId, Role role, EtcdDiscovery discovery, EngineLoad load) {
    Engine engine = Engine.start(engineId, role, fabric, discovery, load);
    open.add(engine);
    return engine;
  }

  private KeyValue awaitKey(String key) {
    KeyValue[] found = new KeyValue[1];
    patiently()
        .until(
            () -> {
              List<KeyValue> kvs =
                  raw.getKVClient().get(bytes(key)).get(5, TimeUnit.SECONDS).getKvs();
              found[0] = kvs.isEmpty() ? null : kvs.get(0);
              return found[0] != null;
            });
    return found[0];
  }

  private Optional<EngineRecord> read(String key) {
    List<KeyValue> kvs = done(raw.getKVClient().get(bytes(key))).getKvs();
    return kvs.stream()
        .findFirst()
        .map(
            kv ->
                EngineRecord.fromJson(
                    key.substring(key.lastIndexOf('/') + 1), kv.getValue().getBytes()));
  }

  private List<String> keys() {
    return done(
            raw.getKVClient()
                .get(
                    bytes("/kvbridge/engines/"),
                    io.etcd.jetcd.options.GetOption.builder().isPrefix(true).build()))
        .getKvs()
        .stream()
        .map(kv -> kv.getKey().toString(StandardCharsets.UTF_8))
        .toList();
  }

  private static <T> T done(java.util.concurrent.CompletableFuture<T> request) {
    try {
      return request.get(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("etcd did not answer the test's request", e);
    }
  }

  private static ConditionFactory patiently() {
    return await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(20));
  }

  private static ByteSequence bytes(String text) {
    return ByteSequence.from(text, StandardCharsets.UTF_8);
  }

  /** {@code params} as a router that relies on discovery passes them: with no address. */
  private static TransferParams withoutHandshakeAddress(TransferParams params) {
    Map<String, Object> map = new HashMap<>(params.toMap());
    map.remove("handshake_address");
    return TransferParams.fromMap(map);
  }
}
