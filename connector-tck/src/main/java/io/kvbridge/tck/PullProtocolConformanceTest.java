package io.kvbridge.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.integrity.ReadDigest;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.lease.EndReason;
import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.lease.LeaseToken;
import io.kvbridge.net.HandshakeAddress;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.runtime.ConnectorRegistry;
import io.kvbridge.runtime.PullConnector;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.ConnectorStatus;
import io.kvbridge.spi.ConsumerStatus;
import io.kvbridge.spi.FinishDecision;
import io.kvbridge.spi.FinishedRequest;
import io.kvbridge.spi.FinishedTransfers;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.LoadFailure;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.LoadSpec;
import io.kvbridge.spi.PeerDirectory;
import io.kvbridge.spi.PeerStatus;
import io.kvbridge.spi.ProducerStatus;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.StepMetadata;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.spi.TransportProvider;
import io.kvbridge.time.ManualClock;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.Transport;
import io.kvbridge.wire.ConsumerHandshake;
import io.kvbridge.wire.Handshake;
import io.kvbridge.wire.HandshakeChannel;
import io.kvbridge.wire.LeaseRef;
import io.kvbridge.wire.ProducerHandshake;
import io.kvbridge.wire.ProtocolMessage;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The pull protocol's behaviour over a connector's transport: what every connector must do,
 * whatever moves its bytes. A connector module extends this class and says how to create its
 * connector; the suite drives a producer and a consumer engine through the SPI exactly as an engine
 * would, with an injected clock.
 *
 * <p>Tests that forge protocol messages reach the transport through {@link
 * PullConnector#transport()}, so the connectors under test are {@link PullConnector}s.
 */
public abstract class PullProtocolConformanceTest {

  /** The producer's layout: 32 blocks of 1 KiB, 4 tokens each. */
  protected static final KvLayout PRODUCER_LAYOUT = KvLayout.opaque("conformance/fp16", 4, 256, 32);

  /** The consumer's pool is larger; block size and model match. */
  protected static final KvLayout CONSUMER_LAYOUT = KvLayout.opaque("conformance/fp16", 4, 256, 64);

  protected static final Duration LEASE = Duration.ofSeconds(30);
  protected static final Duration MAX_LIFETIME = Duration.ofSeconds(120);
  protected static final Duration SAFETY_MARGIN = Duration.ofSeconds(2);
  protected static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(3);

  protected final ManualClock clock = new ManualClock();
  private final Random random = new Random(42);
  private final List<Node> nodes = new ArrayList<>();
  private final List<RecordingTransport> unclaimedRecordings = new ArrayList<>();
  private final List<HandshakeChannel.Server> forgers = new ArrayList<>();
  protected Node producer;
  protected Node consumer;

  /** The peer directory of the engines started from now on. */
  protected PeerDirectory directory = PeerDirectory.NONE;

  /** How many loads from one producer the engines started from now on hold; 0: the default. */
  protected int maxLoadsPerProducer = 0;

  /** How many distinct consumers must read a lease of the producers started from now on. */
  protected int acksRequired = 1;

  /** The observer of the engines started from now on. */
  protected ConnectorObserver observer = ConnectorObserver.NONE;

  /** The provider of the connector type under test. */
  protected abstract TransportProvider provider();

  /**
   * Creates this connector type's connector for {@code settings}, as engines get it, with each
   * rank's transport wrapped in one that passes every call through and counts how bytes move (the
   * prepared-read tests read the counts).
   */
  protected KvConnector newConnector(ConnectorSettings settings) {
    return ConnectorRegistry.of(List.of(provider())).create(settings, this::recorded);
  }

  private Transport recorded(Transport transport) {
    RecordingTransport recording = new RecordingTransport(transport);
    unclaimedRecordings.add(recording);
    return recording;
  }

  /** Where engines answer handshakes; {@code local} unless the transport spans processes. */
  protected String handshakeAddress() {
    return "local";
  }

  /** Connector-specific properties for an engine. */
  protected Map<String, String> connectorProperties() {
    return Map.of();
  }

  /** How long to wait for asynchronous progress before failing a test. */
  protected Duration patience() {
    return Duration.ofSeconds(20);
  }

  @BeforeEach
  void startEngines() {
    producer = node("prefill", Role.PRODUCER, PRODUCER_LAYOUT);
    consumer = node("decode", Role.CONSUMER, CONSUMER_LAYOUT);
  }

  @AfterEach
  void stopEngines() {
    forgers.forEach(HandshakeChannel.Server::close);
    for (Node node : nodes) {
      node.connector.close();
      node.memory.close();
    }
  }

  /** Starts an engine with its own KV cache; closed after the test. */
  protected Node node(String name, Role role, KvLayout layout) {
    return start(name + "-" + UUID.randomUUID().toString().substring(0, 8), role, layout);
  }

  /**
   * Stops {@code node} as a process that exits would, and starts it again under the same engine id
   * with a new incarnation and a fresh KV cache.
   */
  protected Node restart(Node node) {
    nodes.remove(node);
    node.connector.close();
    node.memory.close();
    return start(
        node.connector.settings().engineId(), node.connector.settings().role(), node.layout);
  }

  private Node start(String engineId, Role role, KvLayout layout) {
    return start(engineId, role, layout, null);
  }

  /** Starts an engine that knows the deployment secret {@code secret} ({@code null}: none). */
  protected Node node(String name, Role role, KvLayout layout, String secret) {
    return start(name + "-" + UUID.randomUUID().toString().substring(0, 8), role, layout, secret);
  }

  private Node start(String engineId, Role role, KvLayout layout, String secret) {
    ConnectorSettings.Builder builder =
        ConnectorSettings.builder(provider().type(), engineId)
            .role(role)
            .handshakeSecret(secret)
            .peerDirectory(directory)
            .observer(observer)
            .leaseTerms(new LeaseTerms(LEASE, MAX_LIFETIME))
            .safetyMargin(SAFETY_MARGIN)
            .heartbeatInterval(Duration.ofSeconds(5))
            .replyTimeout(Duration.ofSeconds(5))
            .handshakeTimeout(HANDSHAKE_TIMEOUT)
            .handshakeAddress(handshakeAddress())
            .acksRequired(acksRequired)
            .clock(clock)
            .properties(connectorProperties());
    if (maxLoadsPerProducer > 0) {
      builder.maxLoadsPerProducer(maxLoadsPerProducer);
    }
    ConnectorSettings settings = builder.build();
    KvConnector connector = newConnector(settings);
    List<RecordingTransport> recordings = List.copyOf(unclaimedRecordings);
    unclaimedRecordings.clear();
    KvMemory memory = connector.worker().allocateKvCache(layout);
    connector.worker().registerKvCache(memory, layout);
    Node node = new Node(connector, memory, layout, recordings);
    nodes.add(node);
    return node;
  }

  // ---------------------------------------------------------------- the normal path

  @Test
  void consumerReceivesProducerBlocksByteExactAndLeaseEndsAsRead() {
    List<Integer> producerBlocks = List.of(3, 17, 5);
    Map<Integer, byte[]> written = producer.fill(producerBlocks);
    TransferParams params = prefill("p-1", producerBlocks);

    List<Integer> consumerBlocks = List.of(40, 2, 63);
    load("d-1", params, consumerBlocks);
    settle("d-1");

    assertThat(consumer.received).contains("d-1");
    for (int i = 0; i < producerBlocks.size(); i++) {
      assertThat(consumer.block(consumerBlocks.get(i)))
          .as("block %d", i)
          .isEqualTo(written.get(producerBlocks.get(i)));
    }
    awaitTrue(() -> producer.drain().sent.contains("p-1"));
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.READ, 1L);
    assertThat(producer.producerPart().liveLeases()).isZero();
    assertThat(consumer.consumerPart().readsCompleted()).isEqualTo(1);
    assertThat(consumer.consumerPart().bytesRead()).isEqualTo(3L * 1024);
  }

  @Test
  void requestIsReportedDoneSendingExactlyOnce() {
    TransferParams params = prefill("p-1", List.of(1));
    load("d-1", params, List.of(1));
    settle("d-1");
    awaitTrue(() -> producer.drain().sent.contains("p-1"));

    clock.advance(MAX_LIFETIME);
    producer.drain();

    assertThat(producer.sentCount.get("p-1")).isEqualTo(1);
  }

  @Test
  void abortedRequestIsFreedAtOnce() {
    FinishDecision decision =
        producer
            .connector
            .scheduler()
            .requestFinished(
                new FinishedRequest("p-1", List.of(1, 2), Prompts.of("p-1", 8), 8, true, true));

    assertThat(decision.delayFree()).isFalse();
    assertThat(decision.params()).isEmpty();
    assertThat(producer.producerPart().liveLeases()).isZero();
  }

  @Test
  void requestShorterThanABlockLeasesItsPartlyFilledBlock() {
    FinishDecision decision =
        producer
            .connector
            .scheduler()
            .requestFinished(
                new FinishedRequest("p-1", List.of(1), Prompts.of("p-1", 3), 3, false, true));

    assertThat(decision.delayFree()).isTrue();
    assertThat(decision.params().orElseThrow().blockIds()).containsExactly(1);
    assertThat(decision.params().orElseThrow().tokens()).isEqualTo(3);
  }

  @Test
  void requestWithNoComputedTokenIsFreedAtOnce() {
    FinishDecision decision =
        producer
            .connector
            .scheduler()
            .requestFinished(
                new FinishedRequest("p-1", List.of(1), Prompts.of("p-1", 3), 0, false, true));

    assertThat(decision.delayFree()).isFalse();
  }

  @Test
  void requestNobodyWillReadIsFreedAtOnce() {
    FinishDecision decision =
        producer
            .connector
            .scheduler()
            .requestFinished(
                new FinishedRequest("p-1", List.of(1, 2), Prompts.of("p-1", 8), 8, false, false));

    assertThat(decision.delayFree()).isFalse();
  }

  @Test
  void everyBlockHoldingAComputedTokenIsLeasedAndNoMore() {
    FinishDecision decision =
        producer
            .connector
            .scheduler()
            .requestFinished(
                new FinishedRequest(
                    "p-1", List.of(4, 5, 6, 7), Prompts.of("p-1", 10), 10, false, true));

    assertThat(decision.delayFree()).isTrue();
    assertThat(decision.params().orElseThrow().blockIds()).containsExactly(4, 5, 6);
    assertThat(decision.params().orElseThrow().tokens()).isEqualTo(10);
  }

  // ---------------------------------------------------------------- expiry and revocation

  @Test
  void leaseExpiresWhenTheConsumerNeverReads() {
    prefill("p-1", List.of(1, 2));

    clock.advance(LEASE);

    assertThat(producer.drain().sent).contains("p-1");
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.EXPIRED, 1L);
  }

  @Test
  void scheduledSweepEndsAnExpiredLeaseWithoutAnEngineStep() {
    prefill("p-1", List.of(1));
    clock.advance(LEASE);

    producer.connector.worker().sweep();

    assertThat(producer.producerPart().liveLeases()).isZero();
    assertThat(producer.drain().sent).containsExactly("p-1");
  }

  @Test
  void revokedLeaseIsReportedDoneSending() {
    prefill("p-1", List.of(1));

    assertThat(producer.connector.scheduler().revoke("p-1", "client went away")).isTrue();

    assertThat(producer.drain().sent).containsExactly("p-1");
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.REVOKED, 1L);
  }

  @Test
  void closingTheProducerRevokesEveryLiveLease() {
    prefill("p-1", List.of(1));
    prefill("p-2", List.of(2));

    producer.connector.close();

    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.REVOKED, 2L);
  }

  @Test
  void closingTheConsumerReleasesTheLeasesItConfirmedAtOnce() {
    TransferParams confirmedOnly = prefill("p-1", List.of(1));
    TransferParams lent = prefill("p-2", List.of(2));
    assertThat(confirm(consumer, "d-1", confirmedOnly, Prompts.of("p-1", 4))).isTrue();
    assertThat(confirm(consumer, "d-2", lent, Prompts.of("p-2", 4))).isTrue();
    consumer.connector.scheduler().afterAllocate("d-2", List.of(7));

    consumer.connector.close();

    awaitTrue(() -> producer.drain().sent.containsAll(List.of("p-1", "p-2")));
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.RELEASED, 2L);
    assertThat(producer.producerPart().liveLeases()).isZero();
  }

  // ---------------------------------------------------------------- never decode from freed blocks

  @Test
  void consumerDoesNotStartAReadWhoseLeaseEndsInsideTheSafetyMargin() {
    TransferParams params = prefill("p-1", List.of(1));
    assertThat(confirm(consumer, "d-1", params, Prompts.of("p-1", params.tokens()))).isTrue();
    consumer.connector.scheduler().afterAllocate("d-1", List.of(1));
    // The engine lent its blocks, then took until just before the lease's end to start the read.
    clock.advance(LEASE.minus(SAFETY_MARGIN.dividedBy(2)));

    consumer.connector.worker().startLoad(consumer.connector.scheduler().buildStepMetadata());
    settle("d-1");

    assertThat(consumer.failed).containsKey("d-1");
    assertThat(consumer.failed.get("d-1").reason()).contains("safety margin");
    assertThat(consumer.consumerPart().readsCompleted()).isZero();
  }

  @Test
  void readFinishedAfterTheLeaseExpiredIsRefusedAndNeverReportedReceived() {
    TransferParams params = prefill("p-1", List.of(1, 2));
    load("d-1", params, List.of(1, 2));
    // The lease expires on P while the read is in flight or awaiting validation.
    clock.advance(LEASE);
    producer.connector.worker().sweep();

    settle("d-1");

    assertThat(consumer.received).doesNotContain("d-1");
    assertThat(consumer.failed).containsKey("d-1");
    assertThat(producer.producerPart().leasesEnded())
        .containsEntry(EndReason.EXPIRED, 1L)
        .containsEntry(EndReason.READ, 0L);
  }

  @Test
  void heartbeatKeepsAnUnreadLeaseAlivePastItsFirstDeadline() {
    establishPeer();
    TransferParams params = prefill("p-2", List.of(2));
    assertThat(confirm(consumer, "d-2", params, Prompts.of(params.requestId(), params.tokens())))
        .isTrue();
    consumer.connector.scheduler().afterAllocate("d-2", List.of(2));

    clock.advance(Duration.ofSeconds(20));
    consumer.connector.worker().sweep(); // sends the heartbeats that are due
    awaitTrue(
        () -> {
          producer.drain();
          return producer.producerPart().heartbeatsRenewed() >= 1;
        });
    awaitTrue(
        () -> {
          consumer.drain();
          return consumer.consumerPart().renewalsConfirmed() >= 1;
        });
    clock.advance(Duration.ofSeconds(20));
    producer.connector.worker().sweep();

    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
    consumer.connector.worker().startLoad(consumer.connector.scheduler().buildStepMetadata());
    settle("d-2");
    assertThat(consumer.received).contains("d-2");
  }

  // ---------------------------------------------------------------- prepared reads

  @Test
  void wholeBlocksAreReadByIndexFromListsPreparedOnce() {
    Map<Integer, byte[]> written = producer.fill(List.of(3, 4, 9));
    load("d-1", prefill("p-1", List.of(3, 4)), List.of(10, 11));
    settle("d-1");
    load("d-2", prefill("p-2", List.of(9)), List.of(30));
    settle("d-2");

    assertThat(consumer.received).contains("d-1", "d-2");
    assertThat(consumer.block(10)).isEqualTo(written.get(3));
    assertThat(consumer.block(11)).isEqualTo(written.get(4));
    assertThat(consumer.block(30)).isEqualTo(written.get(9));
    assertThat(consumer.count(r -> r.preparedPosts.get())).isEqualTo(2);
    assertThat(consumer.count(r -> r.describedPosts.get())).isZero();
    assertThat(consumer.count(r -> r.localListsPrepared.get())).isEqualTo(1);
    assertThat(consumer.count(r -> r.remoteListsPrepared.get())).isEqualTo(1);
  }

  @Test
  void aPartlyFilledLastBlockIsReadPieceByPieceBesideTheWholeBlocks() {
    int tokens = PRODUCER_LAYOUT.tokensPerBlock() + 1;
    Map<Integer, byte[]> written = producer.fill(List.of(6, 8));
    FinishDecision decision =
        producer
            .connector
            .scheduler()
            .requestFinished(
                new FinishedRequest(
                    "p-1", List.of(6, 8), Prompts.of("p-1", tokens), tokens, false, true));
    load("d-1", decision.params().orElseThrow(), List.of(12, 13));
    settle("d-1");

    assertThat(consumer.received).contains("d-1");
    assertThat(consumer.block(12)).isEqualTo(written.get(6));
    int usedBytes = CONSUMER_LAYOUT.blockBytes() / CONSUMER_LAYOUT.tokensPerBlock();
    assertThat(java.util.Arrays.copyOf(consumer.block(13), usedBytes))
        .isEqualTo(java.util.Arrays.copyOf(written.get(8), usedBytes));
    assertThat(consumer.count(r -> r.preparedPosts.get())).isEqualTo(1);
    assertThat(consumer.count(r -> r.describedPosts.get())).isEqualTo(1);
    assertThat(consumer.consumerPart().bytesRead())
        .isEqualTo((long) CONSUMER_LAYOUT.blockBytes() + usedBytes);
  }

  @Test
  void aRestartedProducersBlocksAreReadFromListsPreparedAgain() {
    establishPeer();
    int before = consumer.count(r -> r.listsReleased.get());

    producer = restart(producer);
    Map<Integer, byte[]> written = producer.fill(List.of(2));
    load("d-fresh", prefill("p-fresh", List.of(2)), List.of(20));
    settle("d-fresh");

    assertThat(consumer.received).contains("d-fresh");
    assertThat(consumer.block(20)).isEqualTo(written.get(2));
    assertThat(consumer.count(r -> r.remoteListsPrepared.get())).isEqualTo(2);
    assertThat(consumer.count(r -> r.listsReleased.get())).isEqualTo(before + 1);
    assertThat(consumer.count(r -> r.preparedPosts.get())).isEqualTo(2);
  }

  @Test
  void closingTheConsumerReleasesItsPreparedLists() {
    establishPeer();

    consumer.connector.close();

    assertThat(consumer.count(r -> r.listsReleased.get()))
        .isEqualTo(consumer.count(r -> r.localListsPrepared.get() + r.remoteListsPrepared.get()))
        .isPositive();
  }

  // ---------------------------------------------------------------- restarts, aborts, silence

  @Test
  void producerRestartedUnderItsEngineIdServesAgainAfterOneHandshake() {
    establishPeer();
    TransferParams stale = prefill("p-stale", List.of(1));

    producer = restart(producer);
    Map<Integer, byte[]> written = producer.fill(List.of(2, 3));
    TransferParams fresh = prefill("p-fresh", List.of(2, 3));
    load("d-fresh", fresh, List.of(20, 21));
    settle("d-fresh");
    load("d-stale", stale, List.of(10));
    settle("d-stale");

    assertThat(consumer.received).contains("d-fresh");
    assertThat(consumer.block(20)).isEqualTo(written.get(2));
    assertThat(consumer.block(21)).isEqualTo(written.get(3));
    assertThat(consumer.failed.get("d-stale").reason()).contains("restarted");
  }

  @Test
  void consumerRestartedUnderItsEngineIdIsHandshakenAgainAndServed() {
    establishPeer();

    consumer = restart(consumer);
    Map<Integer, byte[]> written = producer.fill(List.of(4));
    TransferParams params = prefill("p-after", List.of(4));
    load("d-after", params, List.of(7));
    settle("d-after");

    assertThat(consumer.received).contains("d-after");
    assertThat(consumer.block(7)).isEqualTo(written.get(4));
    assertThat(producer.connector.status().rejected())
        .containsEntry(RejectedInput.HANDSHAKE_REFUSED, 0L);
  }

  @Test
  void loadCancelledOnTheConsumerReleasesTheLeaseOnTheProducerAtOnce() {
    TransferParams params = prefill("p-1", List.of(1, 2));
    assertThat(confirm(consumer, "d-1", params, Prompts.of("p-1", params.tokens()))).isTrue();
    consumer.connector.scheduler().afterAllocate("d-1", List.of(5, 6));

    assertThat(consumer.connector.scheduler().cancelLoad("d-1", "client went away")).isTrue();

    awaitTrue(() -> producer.drain().sent.contains("p-1"));
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.RELEASED, 1L);
    assertThat(consumer.consumerPart().loadsInFlight()).isZero();
    consumer.drain();
    assertThat(consumer.received).doesNotContain("d-1");
    assertThat(consumer.failed).doesNotContainKey("d-1");
  }

  @Test
  void producerThatNeverConfirmsIsRefusedAfterTheHandshakeAndReplyTimeoutsHavingHeldNoBlock() {
    TransferParams params = prefill("p-1", List.of(1));
    TokenIds prompt = Prompts.of("p-1", params.tokens());

    // The producer's engine never steps, so the confirmation is never answered.
    LoadMatch first = consumer.connector.scheduler().matchRemote("d-1", prompt, 0, params);
    consumer.drain();
    clock.advance(HANDSHAKE_TIMEOUT.plus(Duration.ofSeconds(5)));
    consumer.drain();
    LoadMatch later = consumer.connector.scheduler().matchRemote("d-1", prompt, 0, params);

    assertThat(first).isEqualTo(LoadMatch.PENDING);
    assertThat(later).isInstanceOf(LoadMatch.Unavailable.class);
    assertThat(((LoadMatch.Unavailable) later).reason()).contains("did not confirm");
    assertThat(consumer.consumerPart().loadsInFlight()).isZero();
  }

  // ---------------------------------------------------------------- forged peers

  @Test
  void aNewProducerAnsweringWithTheProducersAlteredMetadataIsRefusedAndThePairServesAtOnce() {
    establishPeer();
    assertANewProducerAnsweringWithIsRefusedAndThePairServes(producerMetadataWithAnExtraRegion());
  }

  @Test
  void aNewProducerAnsweringWithTheProducersOwnMetadataIsRefusedAndThePairServesAtOnce() {
    establishPeer();
    assertANewProducerAnsweringWithIsRefusedAndThePairServes(producerTransport().localMetadata());
  }

  /**
   * A load whose parameters name a new producer id at an address that answers with {@code metadata}
   * (which names the real producer's agent) is refused as forged, the pair serves on, and the
   * forged id is never listed.
   */
  private void assertANewProducerAnsweringWithIsRefusedAndThePairServes(byte[] metadata) {
    String impostor = "evil-p-" + UUID.randomUUID().toString().substring(0, 8);
    String forgedAt = forgedProducer(impostor, 7, metadata);

    pairStillServesAfter(
        () -> {
          TransferParams honest = prefill("p-forged", List.of(9));
          load(
              "d-forged",
              altered(
                  honest,
                  "producer_engine_id",
                  impostor,
                  "handshake_address",
                  forgedAt,
                  "producer_incarnation",
                  "0000000000000007"),
              List.of(9));
          assertForgeryRefused("d-forged", "which belongs to producer");
        });
    assertThat(consumer.consumerPart().producers())
        .extracting(PeerStatus::engineId)
        .containsExactly(producer.connector.settings().engineId());
  }

  @Test
  void metadataOfAnEarlierStartOfTheProducerIsRefusedAsStaleAndThePairServesAtOnce() {
    establishPeer();
    byte[] captured = producerTransport().localMetadata();
    long earlier = producer.connector.settings().incarnation();
    producer = restart(producer);
    establishPeer();
    String producerId = producer.connector.settings().engineId();
    String forgedAt = forgedProducer(producerId, earlier, captured);

    pairStillServesAfter(
        () -> {
          TransferParams honest = prefill("p-stale", List.of(9));
          load(
              "d-stale",
              altered(
                  honest,
                  "handshake_address",
                  forgedAt,
                  "producer_incarnation",
                  java.util.HexFormat.of().toHexDigits(earlier)),
              List.of(9));
          assertForgeryRefused("d-stale", "stale metadata");
        });
    assertThat(consumer.consumerPart().producers())
        .singleElement()
        .satisfies(
            peer -> {
              assertThat(peer.engineId()).isEqualTo(producerId);
              assertThat(peer.incarnation()).isEqualTo(producer.connector.settings().incarnation());
            });
  }

  @Test
  void aReplayedHandshakeOfAnEarlierStartOfTheConsumerIsRefusedAndTheLiveConsumerIsServed()
      throws Exception {
    establishPeer();
    Handshake.Request captured =
        new Handshake.Request(
            consumer.connector.settings().engineId(),
            consumer.connector.settings().incarnation(),
            List.of(CONSUMER_LAYOUT),
            consumerTransport().localMetadata());
    consumer = restart(consumer);
    establishPeer();

    pairStillServesAfter(
        () -> {
          Handshake.Response answer = replay(captured);
          assertThat(answer)
              .isInstanceOfSatisfying(
                  Handshake.Refused.class,
                  refused ->
                      assertThat(refused.reason())
                          .contains("handshake refused as forged")
                          .contains("a replayed handshake of an earlier start"));
          assertThat(producer.connector.status().rejected())
              .containsEntry(RejectedInput.FORGED_PEER, 1L);
        });
    assertThat(producer.producerPart().consumers())
        .containsExactly(consumer.connector.settings().engineId());
  }

  @Test
  void aRestartedConsumersEarlierStartHasTheLeasesItConfirmedRevokedAtOnce() {
    TransferParams confirmed = prefill("p-confirmed", List.of(1));
    assertThat(confirm(consumer, "d-1", confirmed, Prompts.of("p-confirmed", confirmed.tokens())))
        .isTrue();
    TransferParams unclaimed = prefill("p-unclaimed", List.of(2));
    // The consumer's process ends without a word to the producer: its releases never arrive.
    consumerTransport().invalidateRemote(producerTransport().agentName());
    consumer = restart(consumer);

    establishPeer();

    assertThat(producer.drain().sent).contains("p-confirmed").doesNotContain("p-unclaimed");
    assertThat(producer.producerPart().leasesEnded())
        .containsEntry(EndReason.REVOKED, 1L)
        .containsEntry(EndReason.EXPIRED, 0L);
    load("d-unclaimed", unclaimed, List.of(3));
    settle("d-unclaimed");
    assertThat(consumer.received).contains("d-unclaimed");
  }

  /**
   * Runs {@code forgery} while a genuine load from the producer is confirmed and waits for its
   * blocks, then checks that the pair serves at once: that load and a new one are received, byte
   * exact, with no time passing.
   */
  private void pairStillServesAfter(Runnable forgery) {
    Map<Integer, byte[]> written = producer.fill(List.of(5, 6));
    TransferParams inFlight = prefill("p-in-flight", List.of(5));
    assertThat(
            confirm(
                consumer, "d-in-flight", inFlight, Prompts.of("p-in-flight", inFlight.tokens())))
        .isTrue();

    forgery.run();

    consumer.connector.scheduler().afterAllocate("d-in-flight", List.of(50));
    consumer.connector.worker().startLoad(consumer.connector.scheduler().buildStepMetadata());
    settle("d-in-flight");
    TransferParams next = prefill("p-next", List.of(6));
    load("d-next", next, List.of(51));
    settle("d-next");

    assertThat(consumer.failed).doesNotContainKeys("d-in-flight", "d-next");
    assertThat(consumer.received).contains("d-in-flight", "d-next");
    assertThat(consumer.block(50)).isEqualTo(written.get(5));
    assertThat(consumer.block(51)).isEqualTo(written.get(6));
  }

  /** The consumer refused load {@code requestId} as forged, for {@code why}, and counted it. */
  private void assertForgeryRefused(String requestId, String why) {
    assertThat(consumer.failed).as("loads the consumer refused").containsKey(requestId);
    assertThat(consumer.failed.get(requestId).reason())
        .contains("handshake refused as forged")
        .contains(why);
    assertThat(consumer.connector.status().rejected()).containsEntry(RejectedInput.FORGED_PEER, 1L);
  }

  /**
   * The producer's lead metadata as it was while one more region than its KV cache was registered:
   * a blob naming the producer's agent that differs from the one the consumer loaded.
   */
  private byte[] producerMetadataWithAnExtraRegion() {
    Transport lead = producerTransport();
    try (KvMemory extra = lead.allocate(PRODUCER_LAYOUT.blockBytes())) {
      lead.register(extra);
      byte[] metadata = lead.localMetadata();
      lead.deregister(extra);
      return metadata;
    }
  }

  /**
   * Answers every handshake, at an address of its own, as producer {@code engineId} of start {@code
   * incarnation}: the producer's one rank (its layout, its region) with {@code metadata}, an
   * Accepted frame of the producer's altered or captured earlier. Stops when the test ends.
   */
  protected String forgedProducer(String engineId, long incarnation, byte[] metadata) {
    KvMemory memory = producer.memory;
    HandshakeAddress at =
        HandshakeAddress.parse("local://forged-" + UUID.randomUUID().toString().substring(0, 8));
    HandshakeChannel.Responder answers =
        new ProducerHandshake(
            Optional.empty(),
            request ->
                new Handshake.Accepted(
                    engineId,
                    incarnation,
                    clock.nanoTime(),
                    List.of(
                        new Handshake.Rank(
                            PRODUCER_LAYOUT,
                            memory.address(),
                            memory.deviceId(),
                            memory.kind(),
                            metadata))),
            ProducerHandshake.Listener.NONE);
    try {
      HandshakeChannel.Server server = HandshakeChannel.forAddress(at).serve(at, engineId, answers);
      forgers.add(server);
      return server.address().toString();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** Sends {@code captured}, a consumer's request of earlier, to the producer; its answer. */
  private Handshake.Response replay(Handshake.Request captured) {
    HandshakeAddress address =
        HandshakeAddress.parse(producer.producerPart().handshakeAddress().orElseThrow());
    try {
      return ConsumerHandshake.run(
              HandshakeChannel.forAddress(address),
              address,
              captured,
              Optional.empty(),
              HANDSHAKE_TIMEOUT,
              System::nanoTime)
          .response();
    } catch (java.io.IOException e) {
      throw new IllegalStateException("the replayed handshake got no answer", e);
    }
  }

  // ---------------------------------------------------------------- discovery

  @Test
  void paramsWithoutAHandshakeAddressAreResolvedThroughThePeerDirectory() {
    String address = producer.producerPart().handshakeAddress().orElseThrow();
    String producerId = producer.connector.settings().engineId();
    directory = id -> id.equals(producerId) ? Optional.of(address) : Optional.empty();
    consumer = node("decode-discovering", Role.CONSUMER, CONSUMER_LAYOUT);
    Map<Integer, byte[]> written = producer.fill(List.of(3));
    TransferParams params = withoutHandshakeAddress(prefill("p-1", List.of(3)));

    load("d-1", params, List.of(8));
    settle("d-1");

    assertThat(consumer.received).contains("d-1");
    assertThat(consumer.block(8)).isEqualTo(written.get(3));
  }

  @Test
  void paramsWithoutAHandshakeAddressThatNoDirectoryKnowsAreRefused() {
    TransferParams params = withoutHandshakeAddress(prefill("p-1", List.of(3)));

    load("d-1", params, List.of(8));

    assertThat(consumer.failed.get("d-1").reason()).contains("has no handshake address");
    assertThat(consumer.consumerPart().loadsFailed()).isEqualTo(1);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
  }

  @Test
  void producerGoneFailsTheLoadsWaitingOnItAtOnce() {
    TransferParams params = prefill("p-1", List.of(1));
    assertThat(confirm(consumer, "d-1", params, Prompts.of("p-1", params.tokens()))).isTrue();
    consumer.connector.scheduler().afterAllocate("d-1", List.of(5));

    consumer.connector.peerGone(producer.connector.settings().engineId(), "its key expired");
    consumer.drain();

    assertThat(consumer.failed.get("d-1").reason()).contains("its key expired");
    assertThat(consumer.failed.get("d-1").localBlockIds()).containsExactly(5);
    assertThat(consumer.consumerPart().producers()).isEmpty();
  }

  @Test
  void consumerGoneRevokesTheLeasesOnlyItWasKeepingAlive() {
    TransferParams confirmed = prefill("p-1", List.of(1));
    assertThat(confirm(consumer, "d-1", confirmed, Prompts.of("p-1", confirmed.tokens()))).isTrue();
    prefill("p-unclaimed", List.of(2));

    producer.connector.peerGone(consumer.connector.settings().engineId(), "its key expired");

    assertThat(producer.drain().sent).containsExactly("p-1");
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.REVOKED, 1L);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
  }

  /** {@code params} as a router that relies on discovery would pass them: with no address. */
  protected static TransferParams withoutHandshakeAddress(TransferParams params) {
    Map<String, Object> map = new HashMap<>(params.toMap());
    map.remove("handshake_address");
    return TransferParams.fromMap(map);
  }

  // ---------------------------------------------------------------- authenticated handshakes

  private static final String SECRET = "this deployment's handshake secret";

  @Test
  void pairThatSharesTheDeploymentSecretHandshakesAndServes() {
    Node securedProducer = node("prefill-secured", Role.PRODUCER, PRODUCER_LAYOUT, SECRET);
    Node securedConsumer = node("decode-secured", Role.CONSUMER, CONSUMER_LAYOUT, SECRET);
    producer = securedProducer;
    Map<Integer, byte[]> written = producer.fill(List.of(6));
    TransferParams params = prefill("p-1", List.of(6));

    consumer = securedConsumer;
    load("d-1", params, List.of(9));
    settle("d-1");

    assertThat(consumer.received).contains("d-1");
    assertThat(consumer.block(9)).isEqualTo(written.get(6));
  }

  @Test
  void consumerWithoutTheSecretIsRefusedAndLearnsNothingOfTheProducer() {
    producer = node("prefill-secured", Role.PRODUCER, PRODUCER_LAYOUT, SECRET);
    TransferParams params = prefill("p-1", List.of(1));

    load("d-1", params, List.of(1));

    // The consumer ends the handshake at P's greeting: it sent nothing, so P has nothing to count.
    assertThat(consumer.failed.get("d-1").reason())
        .contains("requires the deployment's secret and this consumer has none");
    assertThat(consumer.connector.status().rejected())
        .containsEntry(RejectedInput.HANDSHAKE_UNAUTHENTICATED, 1L);
    assertThat(producer.producerPart().consumers()).isEmpty();
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
  }

  @Test
  void consumerWithAnotherSecretIsRefused() {
    producer = node("prefill-secured", Role.PRODUCER, PRODUCER_LAYOUT, SECRET);
    consumer = node("decode-other", Role.CONSUMER, CONSUMER_LAYOUT, "another deployment's secret");
    TransferParams params = prefill("p-1", List.of(1));

    load("d-1", params, List.of(1));

    // P's proof does not verify under the consumer's secret: the consumer stops before it sends
    // its request, so P never learns who asked.
    assertThat(consumer.failed.get("d-1").reason())
        .contains("did not prove the deployment's secret");
    assertThat(consumer.connector.status().rejected())
        .containsEntry(RejectedInput.HANDSHAKE_UNAUTHENTICATED, 1L);
    assertThat(producer.producerPart().consumers()).isEmpty();
    assertThat(consumer.consumerPart().producers()).isEmpty();
  }

  @Test
  void consumerWithTheSecretRefusesAProducerThatDoesNotProveIt() {
    consumer = node("decode-secured", Role.CONSUMER, CONSUMER_LAYOUT, SECRET);
    TransferParams params = prefill("p-1", List.of(1));

    load("d-1", params, List.of(1));

    assertThat(consumer.failed.get("d-1").reason())
        .contains("trusts only producers that prove the deployment's secret");
    assertThat(consumer.consumerPart().producers()).isEmpty();
  }

  // ---------------------------------------------------------------- untrusted input

  @Test
  void completionWithAWrongTokenFreesNothingAndIsCounted() {
    establishPeer();
    prefill("p-2", List.of(2));

    sendFromConsumer(new LeaseRef("p-2", LeaseToken.random().value()));

    awaitRejected(producer, RejectedInput.WRONG_TOKEN);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
    assertThat(producer.drain().sent).doesNotContain("p-2");
  }

  @Test
  void completionForAnUnknownLeaseFreesNothingAndIsCounted() {
    establishPeer();
    prefill("p-2", List.of(2));

    sendFromConsumer(new LeaseRef("ghost", LeaseToken.random().value()));

    awaitRejected(producer, RejectedInput.UNKNOWN_LEASE);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
  }

  @Test
  void duplicateCompletionIsCountedAndEndsNothingTwice() {
    TransferParams params = establishPeer();

    sendFromConsumer(new LeaseRef(params.requestId(), params.leaseToken()));

    awaitRejected(producer, RejectedInput.LATE_OR_DUPLICATE);
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.READ, 1L);
    assertThat(producer.sentCount.get(params.requestId())).isEqualTo(1);
  }

  // ---------------------------------------------------------------- a completion needs a
  // confirmation

  @Test
  void completionWithoutAConfirmationIsRefusedAndTheLeaseStaysLiveForAConfirmedRead() {
    establishPeer();
    Map<Integer, byte[]> written = producer.fill(List.of(2, 3));
    TransferParams params = prefill("p-1", List.of(2, 3));

    // The right token and the right read digest, but no CONFIRM before it.
    sendFromConsumer(completionOf(params, 0));

    awaitRejected(producer, RejectedInput.NOT_CONFIRMED);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
    assertThat(producer.drain().sent).doesNotContain("p-1");
    // The NACK reaches a consumer with no load of the lease yet (a NACK names no message).
    awaitRejected(consumer, RejectedInput.UNEXPECTED_REPLY);
    load("d-1", params, List.of(40, 41));
    settle("d-1");
    assertThat(consumer.received).contains("d-1");
    assertThat(consumer.block(40)).isEqualTo(written.get(2));
    assertThat(consumer.block(41)).isEqualTo(written.get(3));
    awaitTrue(() -> producer.drain().sent.contains("p-1"));
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.READ, 2L);
  }

  @Test
  void completionSkippingOtherTokensThanItsConfirmationIsRefusedAndTheConfirmedReadStillCounts() {
    establishPeer();
    TransferParams params = prefill("p-1", List.of(2, 3));
    LeaseRef lease = new LeaseRef(params.requestId(), params.leaseToken());
    sendFromConsumer(
        new ProtocolMessage.Confirm(
            lease, consumerId(), readDigestOf(params, 0), 0, clock.nanoTime()));
    // The producer's CONFIRMED reaches a consumer that has no such load.
    awaitTrue(
        () -> {
          producer.drain();
          consumer.drain();
          return consumer.connector.status().rejected().get(RejectedInput.UNEXPECTED_REPLY) >= 1;
        });

    // Each digest is the lease's for the tokens it skips; only the confirmed one may complete.
    sendFromConsumer(completionOf(params, 4));

    awaitRejected(producer, RejectedInput.NOT_CONFIRMED);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
    assertThat(producer.drain().sent).doesNotContain("p-1");
    sendFromConsumer(completionOf(params, 0));
    awaitTrue(() -> producer.drain().sent.contains("p-1"));
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.READ, 2L);
  }

  // ---------------------------------------------------------------- several consumers per lease

  @Test
  void withTwoAcksRequiredTheFirstConsumerIsAcknowledgedAndTheLeaseEndsReadOnlyWithTheSecond() {
    acksRequired = 2;
    producer = node("prefill-two-acks", Role.PRODUCER, PRODUCER_LAYOUT);
    Node second = node("decode-second", Role.CONSUMER, CONSUMER_LAYOUT);
    Map<Integer, byte[]> written = producer.fill(List.of(2, 3));
    TransferParams params = prefill("p-1", List.of(2, 3));

    load("d-1", params, List.of(40, 41));
    settle("d-1");

    assertThat(consumer.received).contains("d-1");
    assertThat(producer.drain().sent).doesNotContain("p-1");
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.READ, 0L);

    load(second, "d-9", params, Prompts.of(params.requestId(), params.tokens()), List.of(7, 8));
    settle(second, "d-9");

    assertThat(second.received).contains("d-9");
    assertThat(second.block(7)).isEqualTo(written.get(2));
    assertThat(second.block(8)).isEqualTo(written.get(3));
    awaitTrue(() -> producer.drain().sent.contains("p-1"));
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.READ, 1L);
    assertThat(producer.producerPart().liveLeases()).isZero();
    assertThat(producer.sentCount.get("p-1")).isEqualTo(1);
  }

  @Test
  void withTwoAcksRequiredTheFirstConsumersRepeatedCompletionIsRefusedAndCountsOnce() {
    acksRequired = 2;
    producer = node("prefill-two-acks", Role.PRODUCER, PRODUCER_LAYOUT);
    Node second = node("decode-second", Role.CONSUMER, CONSUMER_LAYOUT);
    TransferParams params = prefill("p-1", List.of(2, 3));
    load("d-1", params, List.of(40, 41));
    settle("d-1");
    assertThat(consumer.received).contains("d-1");

    sendFromConsumer(completionOf(params, 0));

    awaitRejected(producer, RejectedInput.LATE_OR_DUPLICATE);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
    assertThat(producer.drain().sent).doesNotContain("p-1");
    load(second, "d-9", params, Prompts.of(params.requestId(), params.tokens()), List.of(7, 8));
    settle(second, "d-9");
    assertThat(second.received).contains("d-9");
    awaitTrue(() -> producer.drain().sent.contains("p-1"));
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.READ, 1L);
  }

  @Test
  void malformedNotificationIsCounted() {
    establishPeer();

    consumerTransport().notify(producerTransport().agentName(), new byte[] {'K', 'V', 'B', 1, 42});

    awaitRejected(producer, RejectedInput.MALFORMED_MESSAGE);
  }

  @Test
  void completionFromAnAgentThatNeverHandshookIsCounted() {
    Node stranger = node("stranger", Role.CONSUMER, CONSUMER_LAYOUT);
    Transport strangerTransport = ((PullConnector) stranger.connector).transport();
    String producerAgent =
        strangerTransport.loadRemoteMetadata(producerTransport().localMetadata());
    TransferParams params = prefill("p-1", List.of(1));

    strangerTransport.notify(
        producerAgent,
        io.kvbridge.tck.Messages.completion(
            new LeaseRef(params.requestId(), params.leaseToken()), "stranger"));

    awaitRejected(producer, RejectedInput.UNKNOWN_PEER);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
  }

  @Test
  void incompatibleLayoutIsRefusedAtTheHandshakeQuotingOnlyTheConsumersValue() {
    Node other = node("other", Role.CONSUMER, KvLayout.opaque("another-model/fp8", 4, 256, 64));
    TransferParams params = prefill("p-1", List.of(1));

    load(other, "d-1", params, Prompts.of(params.requestId(), params.tokens()), List.of(1));

    assertThat(other.failed.get("d-1").reason())
        .contains("incompatible KV layout")
        .contains("model another-model/fp8 differs from the producer's")
        .doesNotContain(PRODUCER_LAYOUT.model());
    assertThat(producer.connector.status().rejected())
        .containsEntry(RejectedInput.HANDSHAKE_REFUSED, 1L);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
  }

  @Test
  void blockIdOutsideTheProducersPoolIsRefusedBeforeAnyRead() {
    TransferParams honest = prefill("p-1", List.of(1));
    TransferParams forged =
        altered(honest, "block_ids", List.of(PRODUCER_LAYOUT.blockCount() + 3), "tokens", 4);

    load("d-1", forged, List.of(1));
    settle("d-1");

    assertThat(consumer.failed.get("d-1").reason()).contains("outside the producer's pool");
    assertThat(consumer.connector.status().rejected())
        .containsEntry(RejectedInput.MALFORMED_TRANSFER_PARAMS, 1L);
  }

  @Test
  void paramsNamingAnotherProducerThanTheOneAnsweringAreRefused() {
    TransferParams honest = prefill("p-1", List.of(1));
    TransferParams forged = altered(honest, "producer_engine_id", "impostor");

    load("d-1", forged, List.of(1));
    settle("d-1");

    assertThat(consumer.failed.get("d-1").reason()).contains("answers as");
  }

  @Test
  void paramsWhoseTokensDoNotFitTheBlocksAreRefusedBeforeAnyBlockIsCommitted() {
    TransferParams honest = prefill("p-1", List.of(1, 2));
    // The forger keeps the parameters self-consistent: the prompt digest covers the tokens named.
    TransferParams forged =
        altered(honest, "tokens", 4, "prompt_digest", Prompts.of("p-1", 4).digest(4));

    assertThat(confirm(consumer, "d-1", forged, Prompts.of("p-1", 4))).isFalse();

    assertThat(consumer.failed.get("d-1").reason()).contains("do not hold exactly 4 tokens");
    assertThat(consumer.connector.status().rejected())
        .containsEntry(RejectedInput.MALFORMED_TRANSFER_PARAMS, 1L);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
  }

  @Test
  void paramsWhoseHandshakeAddressDoesNotParseAreRefusedAtMatch() {
    TransferParams honest = prefill("p-1", List.of(1));
    TransferParams forged = altered(honest, "handshake_address", "udp://prefill:1");

    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                consumer
                    .connector
                    .scheduler()
                    .matchRemote("d-1", Prompts.of("p-1", forged.tokens()), 0, forged))
        .isInstanceOf(io.kvbridge.spi.InvalidTransferParamsException.class)
        .hasMessageContaining("handshake_address 'udp://prefill:1' is not an address");
    assertThat(consumer.connector.status().rejected())
        .containsEntry(RejectedInput.MALFORMED_TRANSFER_PARAMS, 1L);
    assertThat(consumer.consumerPart().loadsInFlight()).isZero();
  }

  @Test
  void blockListLargerThanTheConsumersPoolIsRefusedAtMatch() {
    TransferParams honest = prefill("p-1", List.of(1));
    int tooMany = CONSUMER_LAYOUT.blockCount() + 1;
    TransferParams forged =
        altered(
            honest,
            "block_ids",
            java.util.Collections.nCopies(tooMany, 1),
            "block_checksums",
            List.of("0".repeat(8 * tooMany)),
            "tokens",
            tooMany * CONSUMER_LAYOUT.tokensPerBlock());

    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                consumer
                    .connector
                    .scheduler()
                    .matchRemote("d-1", Prompts.of("p-1", forged.tokens()), 0, forged))
        .hasMessageContaining("more than this engine's pool");
    assertThat(consumer.consumerPart().loadsInFlight()).isZero();
  }

  // ---------------------------------------------------------------- a lease opens only its blocks

  /** Ways a router or an attacker may rewrite the block list of genuine parameters. */
  enum BlockForgery {
    ANOTHER_LIVE_LEASES_BLOCKS,
    FREE_BLOCKS,
    OWN_BLOCKS_REVERSED,
    OWN_BLOCKS_SHIFTED_BY_ONE,
    OWN_BLOCK_REPEATED;

    List<Integer> apply(List<Integer> own, List<Integer> otherLease) {
      return switch (this) {
        case ANOTHER_LIVE_LEASES_BLOCKS -> otherLease;
        case FREE_BLOCKS -> List.of(29, 30, 31);
        case OWN_BLOCKS_REVERSED -> List.of(own.get(2), own.get(1), own.get(0));
        case OWN_BLOCKS_SHIFTED_BY_ONE -> own.stream().map(b -> b + 1).toList();
        case OWN_BLOCK_REPEATED -> List.of(own.get(0), own.get(0), own.get(0));
      };
    }
  }

  /**
   * The forger also rewrites the checksums to match the blocks it makes D read, so D's content
   * check passes and only P's read digest stands between the token and the other blocks.
   */
  @ParameterizedTest(name = "{0}")
  @EnumSource(BlockForgery.class)
  void forgedBlockListIsRefusedByTheProducerAndTheLeaseStaysLive(BlockForgery forgery) {
    producer.fill(List.of(3, 7, 11, 20, 21, 22, 29, 30, 31, 4, 8, 12));
    TransferParams honest = prefill("p-1", List.of(3, 7, 11));
    TransferParams otherLease = prefill("p-2", List.of(20, 21, 22));
    List<Integer> forgedIds = forgery.apply(honest.blockIds(), otherLease.blockIds());
    TransferParams forged =
        altered(honest, "block_ids", forgedIds, "block_checksums", producerChecksumsHex(forgedIds));

    load("d-1", forged, List.of(40, 41, 42));
    settle("d-1");

    assertThat(consumer.received).doesNotContain("d-1");
    assertThat(consumer.failed.get("d-1").reason()).contains("WRONG_BLOCKS");
    awaitRejected(producer, RejectedInput.WRONG_BLOCKS);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(2);
    assertThat(producer.drain().sent).isEmpty();
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.READ, 0L);
  }

  @Test
  void genuineParametersStillLoadAfterAForgedBlockListWasRefused() {
    Map<Integer, byte[]> written = producer.fill(List.of(3, 7, 11));
    TransferParams honest = prefill("p-1", List.of(3, 7, 11));
    List<Integer> reversed = List.of(11, 7, 3);
    load(
        "d-1",
        altered(honest, "block_ids", reversed, "block_checksums", producerChecksumsHex(reversed)),
        List.of(40, 41, 42));
    settle("d-1");

    load("d-2", honest, List.of(50, 51, 52));
    settle("d-2");

    assertThat(consumer.received).contains("d-2");
    assertThat(consumer.block(50)).isEqualTo(written.get(3));
    assertThat(consumer.block(52)).isEqualTo(written.get(11));
    awaitTrue(() -> producer.drain().sent.contains("p-1"));
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.READ, 1L);
  }

  @Test
  void genuineParametersWithAnotherPromptOfTheSameLengthAreRefusedAtMatch() {
    TransferParams params = prefill("p-1", List.of(1, 2));

    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                consumer
                    .connector
                    .scheduler()
                    .matchRemote("d-1", Prompts.of("another prompt", params.tokens()), 0, params))
        .isInstanceOf(io.kvbridge.spi.InvalidTransferParamsException.class)
        .hasMessageContaining("another prompt");
    assertThat(consumer.connector.status().rejected())
        .containsEntry(RejectedInput.PROMPT_MISMATCH, 1L);
    assertThat(consumer.consumerPart().loadsInFlight()).isZero();
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
  }

  @Test
  void promptDigestRewrittenForAnotherPromptIsRefusedByTheProducer() {
    TransferParams params = prefill("p-1", List.of(1, 2));
    var otherPrompt = Prompts.of("another prompt", params.tokens());
    TransferParams forged = altered(params, "prompt_digest", otherPrompt.digest(params.tokens()));

    load(consumer, "d-1", forged, otherPrompt, List.of(5, 6));
    settle("d-1");

    assertThat(consumer.received).doesNotContain("d-1");
    awaitRejected(producer, RejectedInput.WRONG_BLOCKS);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
  }

  @Test
  void blockWhoseContentChangedAfterTheGrantFailsTheLoadBeforeAnyCompletion() {
    producer.fill(List.of(1, 2));
    TransferParams params = prefill("p-1", List.of(1, 2));
    producer.fill(List.of(2)); // overwritten while the lease holds it

    load("d-1", params, List.of(5, 6));
    settle("d-1");

    assertThat(consumer.failed.get("d-1").reason()).contains("crc32c");
    assertThat(consumer.connector.status().rejected())
        .containsEntry(RejectedInput.CHECKSUM_MISMATCH, 1L);
    assertThat(consumer.consumerPart().readsCompleted()).isZero();
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
  }

  @Test
  void ackNobodyWaitsForIsCountedAndServesNothing() {
    establishPeer();

    producerTransport()
        .notify(
            consumerTransport().agentName(),
            Messages.ack(new LeaseRef("p-9", LeaseToken.random().value())));

    awaitRejected(consumer, RejectedInput.UNEXPECTED_REPLY);
    assertThat(consumer.received).containsExactly("d-warmup");
  }

  @Test
  void renewalNobodyAskedForIsCountedAndMovesNoDeadline() {
    establishPeer();

    producerTransport()
        .notify(
            consumerTransport().agentName(),
            Messages.renewed(new LeaseRef("p-9", LeaseToken.random().value()), Long.MAX_VALUE));

    awaitRejected(consumer, RejectedInput.UNEXPECTED_REPLY);
    assertThat(consumer.consumerPart().renewalsConfirmed()).isZero();
  }

  @Test
  void malformedHandshakeIsRefusedAndCounted() throws Exception {
    HandshakeAddress address =
        HandshakeAddress.parse(producer.producerPart().handshakeAddress().orElseThrow());

    byte[] answer =
        HandshakeChannel.forAddress(address)
            .exchange(address, greeting -> new byte[] {1, 2, 3}, Duration.ofSeconds(5));

    assertThat(Handshake.decodeResponse(answer)).isInstanceOf(Handshake.Refused.class);
    assertThat(producer.connector.status().rejected())
        .containsEntry(RejectedInput.HANDSHAKE_REFUSED, 1L);
  }

  @Test
  void unreachableProducerFailsTheLoad() {
    TransferParams honest = prefill("p-1", List.of(1));
    TransferParams elsewhere = altered(honest, "handshake_address", unreachableHandshakeAddress());

    load("d-1", elsewhere, List.of(1));
    settle("d-1");

    assertThat(consumer.failed.get("d-1").reason()).contains("handshake with");
  }

  @Test
  void silentProducerDoesNotStallTheStepAndFailsTheLoadAfterTheHandshakeTimeout() throws Exception {
    TransferParams honest = prefill("p-1", List.of(1));
    try (java.net.ServerSocket silent =
        new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      TransferParams elsewhere =
          altered(honest, "handshake_address", "tcp://127.0.0.1:" + silent.getLocalPort());

      TokenIds prompt = Prompts.of(elsewhere.requestId(), elsewhere.tokens());
      LoadMatch first = consumer.connector.scheduler().matchRemote("d-1", prompt, 0, elsewhere);
      consumer.drain();

      // The step came back while the handshake still waits for an answer that never comes, and
      // no block was committed to the load.
      assertThat(first).isEqualTo(LoadMatch.PENDING);
      assertThat(consumer.failed).doesNotContainKey("d-1");
      assertThat(consumer.consumerPart().loadsInFlight()).isEqualTo(1);
      assertThat(confirm(consumer, "d-1", elsewhere, prompt)).isFalse();
      assertThat(consumer.failed.get("d-1").reason()).contains("handshake with");
    }
  }

  /** An address of this connector's handshake scheme where nobody answers. */
  protected String unreachableHandshakeAddress() {
    return "local://nobody-" + UUID.randomUUID();
  }

  // ---------------------------------------------------------------- the status

  @Test
  void heartbeatWithAWrongTokenRenewsNothingAndIsCounted() {
    establishPeer();
    prefill("p-2", List.of(2));

    sendFromConsumer(
        new ProtocolMessage.Heartbeat(
            consumer.connector.settings().engineId(),
            0,
            List.of(new LeaseRef("p-2", LeaseToken.random().value()))));

    awaitRejected(producer, RejectedInput.WRONG_TOKEN);
    assertThat(producer.producerPart().heartbeatsIgnored()).isEqualTo(1);
    assertThat(producer.producerPart().heartbeatsRenewed()).isZero();
  }

  @Test
  void consumerGoneRevokesALeaseOnlyItsHeartbeatsKeptAlive() {
    establishPeer();
    TransferParams params = prefill("p-1", List.of(1));
    sendFromConsumer(
        new ProtocolMessage.Heartbeat(
            consumer.connector.settings().engineId(),
            0,
            List.of(new LeaseRef(params.requestId(), params.leaseToken()))));
    awaitTrue(() -> producer.drain().producerPart().heartbeatsRenewed() == 1);

    producer.connector.peerGone(consumer.connector.settings().engineId(), "its key expired");

    assertThat(producer.drain().sent).contains("p-1");
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.REVOKED, 1L);
  }

  @Test
  void releaseWithAWrongTokenFreesNothingAndIsCounted() {
    establishPeer();
    prefill("p-2", List.of(2));

    sendFromConsumer(
        new ProtocolMessage.Release(
            new LeaseRef("p-2", LeaseToken.random().value()),
            consumer.connector.settings().engineId(),
            "no longer needed"));

    awaitRejected(producer, RejectedInput.WRONG_TOKEN);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
    assertThat(producer.drain().sent).doesNotContain("p-2");
  }

  @Test
  void consumerGoneIsForgottenByTheProducer() {
    establishPeer();

    producer.connector.peerGone(consumer.connector.settings().engineId(), "its key expired");

    assertThat(producer.producerPart().consumers()).isEmpty();
  }

  @Test
  void revokingALeaseThatIsNotLiveChangesNothing() {
    prefill("p-1", List.of(1));

    assertThat(producer.connector.scheduler().revoke("ghost", "client went away")).isFalse();

    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
  }

  @Test
  void completionSentToAnEngineThatDoesNotProduceIsCounted() {
    establishPeer();

    producerTransport()
        .notify(
            consumerTransport().agentName(),
            Messages.completion(
                new LeaseRef("p-9", LeaseToken.random().value()),
                producer.connector.settings().engineId()));

    awaitRejected(consumer, RejectedInput.UNEXPECTED_REPLY);
  }

  @Test
  void oneLeaseLoadedUnderTwoRequestsIsRefusedTheSecondTime() {
    establishPeer();
    TransferParams params = prefill("p-1", List.of(1));
    TokenIds prompt = Prompts.of("p-1", params.tokens());
    assertThat(consumer.connector.scheduler().matchRemote("d-1", prompt, 0, params))
        .isEqualTo(LoadMatch.PENDING);

    assertThatThrownBy(() -> consumer.connector.scheduler().matchRemote("d-2", prompt, 0, params))
        .isInstanceOf(io.kvbridge.spi.InvalidTransferParamsException.class)
        .hasMessageContaining("is already being loaded on this engine");
    assertThat(consumer.connector.status().rejected())
        .containsEntry(RejectedInput.MALFORMED_TRANSFER_PARAMS, 1L);
  }

  @Test
  void loadsBeyondTheLimitPerProducerAreRefusedAndCounted() {
    maxLoadsPerProducer = 1;
    consumer = node("decode-limited", Role.CONSUMER, CONSUMER_LAYOUT);
    TransferParams first = prefill("p-1", List.of(1));
    TransferParams second = prefill("p-2", List.of(2));
    assertThat(
            consumer
                .connector
                .scheduler()
                .matchRemote("d-1", Prompts.of("p-1", first.tokens()), 0, first))
        .isEqualTo(LoadMatch.PENDING);

    LoadMatch match =
        consumer
            .connector
            .scheduler()
            .matchRemote("d-2", Prompts.of("p-2", second.tokens()), 0, second);

    assertThat(match)
        .isInstanceOfSatisfying(
            LoadMatch.Unavailable.class,
            unavailable -> assertThat(unavailable.reason()).contains("max-loads-per-producer"));
    assertThat(consumer.connector.status().rejected())
        .containsEntry(RejectedInput.OVER_PRODUCER_LIMIT, 1L);
  }

  @Test
  void grantedLeasesAreCounted() {
    prefill("p-1", List.of(1));
    prefill("p-2", List.of(2));

    assertThat(producer.producerPart().leasesGranted()).isEqualTo(2);
  }

  @Test
  void aRenewalIsReportedToTheObserver() {
    List<String> renewed = java.util.Collections.synchronizedList(new ArrayList<>());
    observer =
        new ConnectorObserver() {
          @Override
          public void renewed(io.kvbridge.lease.Lease lease) {
            renewed.add(lease.requestId());
          }
        };
    producer = node("prefill-observed", Role.PRODUCER, PRODUCER_LAYOUT);
    establishPeer();
    TransferParams params = prefill("p-1", List.of(1));
    // A renewal moves the deadline only once time has passed since the grant.
    clock.advance(Duration.ofSeconds(1));

    sendFromConsumer(
        new ProtocolMessage.Heartbeat(
            consumer.connector.settings().engineId(),
            0,
            List.of(new LeaseRef(params.requestId(), params.leaseToken()))));
    awaitTrue(() -> producer.drain().producerPart().heartbeatsRenewed() == 1);

    assertThat(renewed).containsExactly("p-1");
  }

  @Test
  void aLoadFromAHandshakenProducerIsConfirmedWithinOneStepOfEachEngine() {
    establishPeer();
    TransferParams params = prefill("p-1", List.of(1));
    TokenIds prompt = Prompts.of("p-1", params.tokens());
    assertThat(consumer.connector.scheduler().matchRemote("d-1", prompt, 0, params))
        .isEqualTo(LoadMatch.PENDING);
    int producerHeard = producer.count(r -> r.notificationsReceived.get());
    int consumerHeard = consumer.count(r -> r.notificationsReceived.get());

    // Only P steps until the confirmation arrives (a transport may take a while to deliver it):
    // D must have sent it from matchRemote, not from a later step of its own. P answers in the
    // step that hears it, and D's next step that hears the answer makes the load ready.
    awaitTrue(() -> producer.drain().count(r -> r.notificationsReceived.get()) > producerHeard);
    awaitTrue(() -> consumer.drain().count(r -> r.notificationsReceived.get()) > consumerHeard);

    assertThat(consumer.connector.scheduler().matchRemote("d-1", prompt, 0, params))
        .isInstanceOf(LoadMatch.Ready.class);
  }

  @Test
  void aPromptHeldWhollyLocallyReleasesTheLeaseWithoutReading() {
    TransferParams params = prefill("p-1", List.of(1, 2));

    LoadMatch match =
        consumer
            .connector
            .scheduler()
            .matchRemote("d-1", Prompts.of("p-1", params.tokens()), params.tokens(), params);

    assertThat(match).isEqualTo(new LoadMatch.Ready(params.tokens(), 0));
    awaitTrue(
        () -> {
          consumer.drain();
          return producer.drain().producerPart().liveLeases() == 0;
        });
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.RELEASED, 1L);
    assertThat(consumer.consumerPart().readsCompleted()).isZero();
  }

  @Test
  void anAnswerThatCannotBeSentIsReportedAndItsConsumerForgotten() {
    List<String> failedTo = java.util.Collections.synchronizedList(new ArrayList<>());
    observer =
        new ConnectorObserver() {
          @Override
          public void notificationFailed(String toEngineId, String message) {
            failedTo.add(toEngineId);
          }
        };
    producer = node("prefill-observed", Role.PRODUCER, PRODUCER_LAYOUT);
    establishPeer();
    TransferParams params = prefill("p-1", List.of(1));
    String consumerId = consumer.connector.settings().engineId();
    sendFromConsumer(
        new ProtocolMessage.Heartbeat(
            consumerId, 0, List.of(new LeaseRef(params.requestId(), params.leaseToken()))));

    producerTransport().invalidateRemote(consumerTransport().agentName());
    awaitTrue(() -> producer.drain().producerPart().heartbeatsRenewed() == 1);

    assertThat(failedTo).containsExactly(consumerId);
    assertThat(producer.producerPart().consumers()).isEmpty();
  }

  // ---------------------------------------------------------------- calls an engine may not make

  @Test
  void aProducerRefusesTheConsumersCalls() {
    TransferParams params = prefill("p-1", List.of(1));
    var scheduler = producer.connector.scheduler();
    TokenIds prompt = Prompts.of("p-1", params.tokens());
    StepMetadata loads = new StepMetadata(List.of(new LoadSpec("d-1", params, List.of(1))));

    assertThatThrownBy(() -> scheduler.matchRemote("d-1", prompt, 0, params))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("does not load remote KV");
    assertThatThrownBy(() -> scheduler.afterAllocate("d-1", List.of(1)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("does not load remote KV");
    assertThatThrownBy(() -> producer.connector.worker().startLoad(loads))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("does not load remote KV");
    assertThat(scheduler.cancelLoad("d-1", "client went away")).isFalse();
    assertThat(scheduler.buildStepMetadata().loadsToStart()).isEmpty();
  }

  @Test
  void aConsumerFreesEveryFinishedRequestAtOnce() {
    FinishDecision decision =
        consumer
            .connector
            .scheduler()
            .requestFinished(
                new FinishedRequest("d-1", List.of(1, 2), Prompts.of("d-1", 8), 8, false, true));

    assertThat(decision.delayFree()).isFalse();
    assertThat(decision.params()).isEmpty();
  }

  @Test
  void cancellingALoadTheConsumerDoesNotKnowIsRefusedAndLeavesItUsable() throws Exception {
    assertThat(consumer.connector.scheduler().cancelLoad("ghost", "client went away")).isFalse();

    // Another thread can still reach the consumer's state.
    assertThat(
            java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> consumer.connector.status().consumer())
                .get(patience().toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS))
        .isPresent();
  }

  @Test
  void aClosedConnectorRefusesEveryEngineCall() {
    TransferParams params = prefill("p-1", List.of(1));
    KvConnector closed = consumer.connector;
    TokenIds prompt = Prompts.of("p-1", params.tokens());
    StepMetadata loads = new StepMetadata(List.of(new LoadSpec("d-1", params, List.of(1))));
    closed.close();

    for (org.assertj.core.api.ThrowableAssert.ThrowingCallable call :
        List.<org.assertj.core.api.ThrowableAssert.ThrowingCallable>of(
            () -> closed.scheduler().matchRemote("d-1", prompt, 0, params),
            () -> closed.scheduler().afterAllocate("d-1", List.of(1)),
            () -> closed.worker().startLoad(loads),
            () -> closed.worker().allocateKvCache(CONSUMER_LAYOUT),
            () -> closed.worker().registerKvCache(consumer.memory, CONSUMER_LAYOUT))) {
      assertThatThrownBy(call)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("is closed");
    }
    assertThat(closed.scheduler().cancelLoad("d-1", "client went away")).isFalse();
  }

  @Test
  void aRankRegistersItsKvCacheOnlyOnce() {
    assertThatThrownBy(
            () -> producer.connector.worker().registerKvCache(producer.memory, PRODUCER_LAYOUT))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("rank 0 already has a KV cache registered");
  }

  @Test
  void aRankTheEngineDoesNotHaveIsRefused() {
    assertThatThrownBy(() -> producer.connector.worker(1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("has ranks 0 to 0");
    assertThatThrownBy(() -> producer.connector.worker(-1))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void eachEngineShowsOnlyThePartsOfItsRole() {
    ConnectorStatus p = producer.connector.status();
    ConnectorStatus c = consumer.connector.status();

    assertThat(p.role()).isEqualTo(Role.PRODUCER);
    assertThat(p.incarnation()).isEqualTo(producer.connector.settings().incarnation());
    assertThat(p.producer()).isPresent();
    assertThat(p.consumer()).isEmpty();
    assertThat(c.role()).isEqualTo(Role.CONSUMER);
    assertThat(c.producer()).isEmpty();
    assertThat(c.consumer()).isPresent();
  }

  @Test
  void aProducerWhoseKvCacheIsNotRegisteredYetAnswersNoHandshakes() {
    ConnectorSettings settings =
        ConnectorSettings.builder(provider().type(), "prefill-" + UUID.randomUUID())
            .role(Role.PRODUCER)
            .handshakeAddress(handshakeAddress())
            .clock(clock)
            .properties(connectorProperties())
            .build();
    try (KvConnector unstarted = newConnector(settings)) {
      ProducerStatus status = unstarted.status().producer().orElseThrow();

      assertThat(status.handshakeAddress()).isEmpty();
      assertThat(status.consumers()).isEmpty();
      assertThat(status.droppedConnections().values()).containsOnly(0L);
    }
  }

  @Test
  void eachSideNamesThePeersItHandshookWith() {
    TransferParams params = establishPeer();

    assertThat(producer.producerPart().consumers())
        .containsExactly(consumer.connector.settings().engineId());
    assertThat(consumer.consumerPart().producers())
        .singleElement()
        .satisfies(
            peer -> {
              assertThat(peer.engineId()).isEqualTo(params.producerEngineId());
              assertThat(peer.incarnation()).isEqualTo(params.producerIncarnation());
              assertThat(peer.address()).isEqualTo(params.handshakeAddress().orElseThrow());
              // Both engines read one clock, so the estimate finds no offset.
              assertThat(peer.clockOffsetNanos()).isZero();
              assertThat(peer.clockUncertaintyNanos()).isPositive();
            });
  }

  @Test
  void soonestExpiryIsTheTimeLeftToTheEarliestLiveLease() {
    assertThat(producer.producerPart().soonestExpiry()).isEmpty();
    prefill("p-1", List.of(1));
    clock.advance(Duration.ofSeconds(10));
    prefill("p-2", List.of(2));

    assertThat(producer.producerPart().soonestExpiry()).contains(LEASE.minusSeconds(10));
    assertThat(producer.producerPart().liveLeases()).isEqualTo(2);
  }

  // ---------------------------------------------------------------- helpers

  /**
   * {@code params} with some fields replaced, given as alternating snake_case keys and values, read
   * back through {@link TransferParams#fromMap} as a consumer reads what the router hands it.
   */
  protected static TransferParams altered(TransferParams params, Object... keysAndValues) {
    Map<String, Object> map = new HashMap<>(params.toMap());
    for (int i = 0; i < keysAndValues.length; i += 2) {
      map.put((String) keysAndValues[i], keysAndValues[i + 1]);
    }
    return TransferParams.fromMap(map);
  }

  /**
   * The checksums P's current memory gives {@code blocks}, in transfer-parameter form (one string,
   * the producer has one rank).
   */
  protected List<String> producerChecksumsHex(List<Integer> blocks) {
    StringBuilder hex = new StringBuilder();
    for (int block : blocks) {
      int crc =
          ChecksumScheme.CRC32C.checksum(
              producer.memory,
              (long) block * PRODUCER_LAYOUT.blockBytes(),
              PRODUCER_LAYOUT.blockBytes());
      hex.append(java.util.HexFormat.of().toHexDigits(crc));
    }
    return List.of(hex.toString());
  }

  /** Runs one full load so the consumer knows the producer; returns its parameters. */
  protected TransferParams establishPeer() {
    TransferParams params = prefill("p-warmup", List.of(0));
    load("d-warmup", params, List.of(0));
    settle("d-warmup");
    assertThat(consumer.received).contains("d-warmup");
    awaitTrue(() -> producer.drain().sent.contains("p-warmup"));
    return params;
  }

  /** Finishes a prefill on the producer and returns the parameters for the consumer. */
  protected TransferParams prefill(String requestId, List<Integer> blocks) {
    FinishDecision decision =
        producer
            .connector
            .scheduler()
            .requestFinished(
                new FinishedRequest(
                    requestId,
                    blocks,
                    Prompts.of(requestId, blocks.size() * PRODUCER_LAYOUT.tokensPerBlock()),
                    blocks.size() * PRODUCER_LAYOUT.tokensPerBlock(),
                    false,
                    true));
    assertThat(decision.delayFree()).isTrue();
    return decision.params().orElseThrow();
  }

  /** Loads {@code params} on the consumer for the prompt they were granted for. */
  protected void load(String requestId, TransferParams params, List<Integer> localBlocks) {
    load(consumer, requestId, params, Prompts.of(params.requestId(), params.tokens()), localBlocks);
  }

  /**
   * Loads {@code params} on {@code node} as an engine does: asks until the producer confirmed the
   * lease, then lends the blocks and starts the read. A refusal is recorded as the load's failure.
   */
  protected void load(
      Node node, String requestId, TransferParams params, TokenIds prompt, List<Integer> blocks) {
    if (confirm(node, requestId, params, prompt)) {
      node.connector.scheduler().afterAllocate(requestId, blocks);
      node.connector.worker().startLoad(node.connector.scheduler().buildStepMetadata());
    }
  }

  /**
   * Asks {@code node} about the load on every step of both engines until the answer is not {@link
   * LoadMatch#PENDING}; returns whether it is {@link LoadMatch.Ready}. An {@link
   * LoadMatch.Unavailable} answer is recorded in {@code node.failed} with no blocks.
   */
  protected boolean confirm(Node node, String requestId, TransferParams params, TokenIds prompt) {
    return confirm(node, requestId, params, prompt, 0);
  }

  /** {@link #confirm} for an engine that holds the first {@code localTokens} of the prompt. */
  protected boolean confirm(
      Node node, String requestId, TransferParams params, TokenIds prompt, int localTokens) {
    LoadMatch[] match = {
      node.connector.scheduler().matchRemote(requestId, prompt, localTokens, params)
    };
    awaitTrue(
        () -> {
          if (match[0] instanceof LoadMatch.Pending) {
            producer.drain();
            node.drain();
            match[0] =
                node.connector.scheduler().matchRemote(requestId, prompt, localTokens, params);
          }
          return !(match[0] instanceof LoadMatch.Pending);
        });
    if (match[0] instanceof LoadMatch.Unavailable unavailable) {
      node.failed.put(requestId, new LoadFailure(requestId, List.of(), unavailable.reason()));
      return false;
    }
    return true;
  }

  /** Steps both engines until the consumer's request was received or failed. */
  protected void settle(String consumerRequestId) {
    settle(consumer, consumerRequestId);
  }

  /** Steps {@code node} and the producer until {@code node}'s request was received or failed. */
  protected void settle(Node node, String consumerRequestId) {
    awaitTrue(
        () -> {
          node.drain();
          producer.drain();
          return node.received.contains(consumerRequestId)
              || node.failed.containsKey(consumerRequestId);
        });
  }

  protected void awaitTrue(BooleanSupplier condition) {
    await().atMost(patience()).pollInterval(Duration.ofMillis(2)).until(condition::getAsBoolean);
  }

  private void awaitRejected(Node node, RejectedInput kind) {
    awaitTrue(
        () -> {
          node.drain();
          return node.connector.status().rejected().getOrDefault(kind, 0L) >= 1;
        });
  }

  /**
   * The read digest of reading {@code params}' lease from the producer into the consumer (one rank
   * each, {@link #PRODUCER_LAYOUT} and {@link #CONSUMER_LAYOUT}), skipping {@code skipTokens}.
   */
  protected static ReadDigest readDigestOf(TransferParams params, int skipTokens) {
    return ReadDigest.of(
        ReadDigest.binding(
            params.requestId(), params.promptDigest(), params.tokens(), params.blockIds()),
        ReadDigest.shape(List.of(PRODUCER_LAYOUT), List.of(CONSUMER_LAYOUT)),
        skipTokens);
  }

  /** The consumer's COMPLETION of {@code params}' lease, skipping {@code skipTokens}. */
  private ProtocolMessage completionOf(TransferParams params, int skipTokens) {
    return new ProtocolMessage.Completion(
        new LeaseRef(params.requestId(), params.leaseToken()),
        consumerId(),
        readDigestOf(params, skipTokens),
        skipTokens);
  }

  private String consumerId() {
    return consumer.connector.settings().engineId();
  }

  private void sendFromConsumer(ProtocolMessage message) {
    consumerTransport().notify(producerTransport().agentName(), ProtocolMessage.encode(message));
  }

  private void sendFromConsumer(LeaseRef lease) {
    consumerTransport()
        .notify(
            producerTransport().agentName(),
            Messages.completion(lease, consumer.connector.settings().engineId()));
  }

  protected Transport producerTransport() {
    return ((PullConnector) producer.connector).transport();
  }

  protected Transport consumerTransport() {
    return ((PullConnector) consumer.connector).transport();
  }

  /** One engine under test: its connector, its KV memory and what its steps reported. */
  protected final class Node {
    final KvConnector connector;
    final KvMemory memory;
    final KvLayout layout;
    final List<RecordingTransport> recordings;
    final Set<String> received = new HashSet<>();
    final Set<String> sent = new HashSet<>();
    final Map<String, Integer> sentCount = new HashMap<>();
    final Map<String, LoadFailure> failed = new HashMap<>();

    Node(
        KvConnector connector,
        KvMemory memory,
        KvLayout layout,
        List<RecordingTransport> recordings) {
      this.connector = connector;
      this.memory = memory;
      this.layout = layout;
      this.recordings = recordings;
    }

    /** A count of this engine's transports, summed over its ranks. */
    int count(java.util.function.ToIntFunction<RecordingTransport> what) {
      assumeTrue(!recordings.isEmpty(), "this suite's connectors were created without recording");
      return recordings.stream().mapToInt(what).sum();
    }

    /** One engine step: what getFinished reports is recorded. */
    Node drain() {
      FinishedTransfers finished = connector.worker().getFinished(Set.of());
      received.addAll(finished.doneReceiving());
      sent.addAll(finished.doneSending());
      finished.doneSending().forEach(id -> sentCount.merge(id, 1, Integer::sum));
      finished.failedLoads().forEach(f -> failed.put(f.requestId(), f));
      return this;
    }

    Map<Integer, byte[]> fill(List<Integer> blocks) {
      Map<Integer, byte[]> written = new HashMap<>();
      for (int block : blocks) {
        byte[] bytes = new byte[layout.blockBytes()];
        random.nextBytes(bytes);
        memory.write((long) block * layout.blockBytes(), ByteBuffer.wrap(bytes));
        written.put(block, bytes);
      }
      return written;
    }

    /** The producer's part of this engine's status. */
    ProducerStatus producerPart() {
      return connector.status().producer().orElseThrow();
    }

    /** The consumer's part of this engine's status. */
    ConsumerStatus consumerPart() {
      return connector.status().consumer().orElseThrow();
    }

    byte[] block(int block) {
      byte[] bytes = new byte[layout.blockBytes()];
      memory.read((long) block * layout.blockBytes(), ByteBuffer.wrap(bytes));
      return bytes;
    }
  }
}
