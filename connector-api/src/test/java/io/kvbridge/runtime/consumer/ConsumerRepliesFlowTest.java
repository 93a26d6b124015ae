package io.kvbridge.runtime.consumer;

import static io.kvbridge.runtime.consumer.HandshakeFixture.serve;
import static io.kvbridge.runtime.consumer.HandshakeFixture.stubProducer;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.integrity.ChecksumInput;
import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.lease.LeaseToken;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.observe.TransferSpans;
import io.kvbridge.runtime.engine.ConnectorCounters;
import io.kvbridge.runtime.engine.Ranks;
import io.kvbridge.runtime.engine.StubMemory;
import io.kvbridge.runtime.engine.StubTransport;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.LoadFailure;
import io.kvbridge.spi.LoadSpec;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.transfer.KvRegions;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.wire.HandshakeChannel;
import io.kvbridge.wire.LeaseRef;
import io.kvbridge.wire.ProtocolMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A consumer handshaken with a producer over the in-process channel, fed the producer's replies:
 * which replies move a load, which are counted as unexpected, and when the producer is suspected
 * (handshaken with again).
 */
class ConsumerRepliesFlowTest {

  private static final KvLayout LAYOUT = KvLayout.opaque("m", 4, 4, 16);
  private static final long MS = 1_000_000;
  private static final AtomicInteger PRODUCERS = new AtomicInteger();

  private final String producer = "replies-producer-" + PRODUCERS.incrementAndGet();
  private final String producerAgent = producer + "-agent";
  private long now = 1_000 * MS;
  private final List<String> handshakes = new ArrayList<>();
  private final List<String> clockSamples = new ArrayList<>();
  private final List<RejectedInput> rejected = new ArrayList<>();
  private final StubTransport transport = new StubTransport("decode-agent");
  private final StubMemory memory = new StubMemory(0x1000, 256);
  private final ConnectorSettings settings =
      ConnectorSettings.builder("stub", "decode-0").clock(() -> now).build();
  private final ConnectorCounters counters =
      new ConnectorCounters(
          new ConnectorObserver() {
            @Override
            public void handshakeCompleted(String producerEngineId, long nanos) {
              handshakes.add(producerEngineId);
            }

            @Override
            public void clockEstimated(
                String producerEngineId, long offsetNanos, long uncertaintyNanos) {
              clockSamples.add(producerEngineId);
            }

            @Override
            public void rejected(RejectedInput kind, String detail) {
              rejected.add(kind);
            }
          });
  private final Consumer consumer;
  private final ConsumerReplies replies;
  private final HandshakeChannel.Server server;
  private int loadsMade;

  ConsumerRepliesFlowTest() throws Exception {
    Ranks ranks = new Ranks(List.of(transport));
    ranks.register(0, new KvRegions(LAYOUT, List.of(memory)));
    consumer = new Consumer(settings, ranks, counters);
    consumer.start();
    replies = new ConsumerReplies(consumer, settings, counters);
    ConnectorSettings producerSettings =
        ConnectorSettings.builder("stub", producer).incarnation(7).clock(() -> now).build();
    server = serve("local://" + producer, producer, stubProducer(producerSettings, LAYOUT));
  }

  @AfterEach
  void close() throws Exception {
    server.close();
    consumer.handshakes().close();
  }

  /** A load matched, handshaken and sent its CONFIRM, its step ended. */
  private Load confirming() {
    loadsMade++;
    int checksum =
        ChecksumScheme.CRC32C.checksum(
            ChecksumInput.of(List.of(new ChecksumInput.Range(memory, 0, 16))));
    TokenIds prompt = TokenIds.of(new int[8]);
    TransferParams params =
        new TransferParams(
            producer,
            7L,
            "p-" + loadsMade,
            List.of(3),
            4,
            prompt.digest(4),
            LeaseToken.random().value(),
            now + 10_000 * MS,
            Optional.of("local://" + producer),
            ChecksumScheme.CRC32C,
            List.of(List.of(checksum)));
    consumer.matchRemote("d-" + loadsMade, prompt, 0, params);
    Load load = consumer.loads().get("d-" + loadsMade).orElseThrow();
    assertThat(load.peer()).isNotNull();
    consumer.progress(); // ends the handshake's round, as every engine step does
    return load;
  }

  private Load allocated() {
    Load load = confirming();
    replies.onMessage(
        producerAgent,
        new ProtocolMessage.Confirmed(
            load.lease(), load.producerDeadline(), load.confirmSentAt(), now));
    consumer.afterAllocate(load.requestId(), List.of(5));
    return load;
  }

  private Load reading() {
    Load load = allocated();
    consumer.post(new LoadSpec(load.requestId(), load.params(), load.localBlocks()));
    assertThat(load.state()).isEqualTo(Load.State.READING);
    return load;
  }

  private Load awaitingReply() {
    Load load = reading();
    transport.status = TransferStatus.DONE;
    consumer.progress();
    assertThat(load.state()).isEqualTo(Load.State.AWAITING_REPLY);
    return load;
  }

  @Test
  void aConfirmationEchoingTheConfirmSamplesTheProducersClock() {
    Load load = confirming();
    int before = clockSamples.size();

    replies.onMessage(
        producerAgent,
        new ProtocolMessage.Confirmed(load.lease(), now + 20_000 * MS, load.confirmSentAt(), now));

    assertThat(load.state()).isEqualTo(Load.State.AWAITING_ALLOCATION);
    assertThat(clockSamples.subList(before, clockSamples.size())).containsExactly(producer);
    assertThat(load.producerDeadline()).isEqualTo(now + 20_000 * MS);
  }

  @Test
  void aConfirmationForALoadNoLongerConfirmingIsUnexpected() {
    Load load = allocated();

    replies.onMessage(
        producerAgent, new ProtocolMessage.Confirmed(load.lease(), now, load.confirmSentAt(), now));

    assertThat(rejected).containsExactly(RejectedInput.UNEXPECTED_REPLY);
    assertThat(load.state()).isEqualTo(Load.State.READY);
  }

  @Test
  void aNackOfACompletedReadFailsTheLoadAndTagsTheReply() {
    Load load = awaitingReply();
    LoadTest.RecordingSpan root = new LoadTest.RecordingSpan("load");
    load.traced(root);
    load.startPhase(TransferSpans.LOAD_VALIDATE);

    replies.onMessage(producerAgent, new ProtocolMessage.Nack(load.lease(), "checksum"));

    assertThat(root.children.get(0).tags).containsExactly(TransferSpans.REPLY + "=nack");
    assertThat(consumer.drainFailures())
        .extracting(LoadFailure::reason)
        .containsExactly(
            "producer " + producer + " refused the lease (checksum); the read is not used");
  }

  @Test
  void aNackWhileTheEngineAllocatesIsUnexpected() {
    Load load = allocated();

    replies.onMessage(producerAgent, new ProtocolMessage.Nack(load.lease(), "late"));

    assertThat(rejected).containsExactly(RejectedInput.UNEXPECTED_REPLY);
    assertThat(consumer.inFlight()).isEqualTo(1);
  }

  @Test
  void anAckBeforeTheReadCompletedIsUnexpected() {
    Load load = reading();

    replies.onMessage(producerAgent, new ProtocolMessage.Ack(load.lease()));

    assertThat(rejected).containsExactly(RejectedInput.UNEXPECTED_REPLY);
    assertThat(consumer.drainReceived()).isEmpty();
  }

  @Test
  void anAckNamingAnotherLeaseTokenIsUnexpected() {
    Load load = awaitingReply();

    replies.onMessage(
        producerAgent,
        new ProtocolMessage.Ack(
            new LeaseRef(load.lease().requestId(), LeaseToken.random().value())));

    assertThat(rejected).containsExactly(RejectedInput.UNEXPECTED_REPLY);
    assertThat(consumer.drainReceived()).isEmpty();
    replies.onMessage(producerAgent, new ProtocolMessage.Ack(load.lease()));
    assertThat(consumer.drainReceived()).containsExactly(load.requestId());
  }

  @Test
  void aReplyForALoadWhoseProducerIsNotYetKnownIsUnexpected() {
    confirming();
    TransferParams params = consumer.loads().get("d-1").orElseThrow().params();
    Load unresolved =
        new Load(
            "d-other",
            new TransferParams(
                producer,
                7L,
                "p-other",
                params.blockIds(),
                params.tokens(),
                params.promptDigest(),
                LeaseToken.random().value(),
                params.deadlineNanos(),
                params.handshakeAddress(),
                params.checksumScheme(),
                params.blockChecksums()),
            0,
            0L,
            Long.MAX_VALUE);
    consumer.loads().add(unresolved);

    replies.onMessage(producerAgent, new ProtocolMessage.Nack(unresolved.lease(), "no"));

    assertThat(rejected).containsExactly(RejectedInput.UNEXPECTED_REPLY);
    assertThat(consumer.inFlight()).isEqualTo(2);
  }

  @Test
  void aRenewalEchoingTheLastHeartbeatSamplesTheClockAndExtendsTheLease() {
    Load load = allocated();
    now += 10_000 * MS;
    consumer.progress();
    long heartbeatAt = now;
    int before = clockSamples.size();

    replies.onMessage(
        producerAgent,
        new ProtocolMessage.Renewed(
            heartbeatAt,
            now,
            List.of(new ProtocolMessage.Renewal(load.lease(), now + 60_000 * MS))));

    assertThat(clockSamples.subList(before, clockSamples.size())).containsExactly(producer);
    assertThat(load.producerDeadline()).isEqualTo(now + 60_000 * MS);
    assertThat(consumer.status().renewalsConfirmed()).isEqualTo(1);
  }

  @Test
  void aRenewalNotEchoingTheLastHeartbeatLeavesTheClockAlone() {
    Load load = allocated();
    now += 10_000 * MS;
    consumer.progress();
    int before = clockSamples.size();

    replies.onMessage(
        producerAgent,
        new ProtocolMessage.Renewed(
            now - 1, now, List.of(new ProtocolMessage.Renewal(load.lease(), now + 60_000 * MS))));

    assertThat(clockSamples).hasSize(before);
    assertThat(load.producerDeadline()).isEqualTo(now + 60_000 * MS);
  }

  @Test
  void aRenewalFromAnUnknownAgentIsUnexpected() {
    Load load = allocated();
    now += 10_000 * MS;
    consumer.progress();
    int before = clockSamples.size();

    replies.onMessage(
        "stranger",
        new ProtocolMessage.Renewed(
            now, now, List.of(new ProtocolMessage.Renewal(load.lease(), now + 60_000 * MS))));

    assertThat(clockSamples).hasSize(before);
    assertThat(rejected).containsExactly(RejectedInput.UNEXPECTED_REPLY);
  }

  @Test
  void aReadThatCannotBePostedMakesTheProducerSuspect() {
    Load load = allocated();
    transport.refuseNextIndexedPost = true;

    consumer.post(new LoadSpec(load.requestId(), load.params(), load.localBlocks()));

    assertThat(handshakes).containsExactly(producer, producer);
  }

  @Test
  void aFailedReadMakesTheProducerSuspect() {
    reading();
    transport.status = new TransferStatus.Failed("link down");

    consumer.progress();

    assertThat(consumer.drainFailures())
        .extracting(LoadFailure::reason)
        .containsExactly("read failed: link down");
    assertThat(handshakes).containsExactly(producer, producer);
  }

  @Test
  void aCompletionThatCannotBeSentMakesTheProducerSuspect() {
    reading();
    transport.status = TransferStatus.DONE;
    transport.refuseNotifications = true;

    consumer.progress();

    assertThat(handshakes).containsExactly(producer, producer);
  }

  @Test
  void aConfirmationTimeoutMakesTheProducerSuspect() {
    Load load = confirming();
    now = load.stateDeadline();

    consumer.progress();

    assertThat(handshakes).containsExactly(producer, producer);
  }

  @Test
  void aReplyTimeoutMakesTheProducerSuspect() {
    Load load = awaitingReply();
    now = load.stateDeadline();

    consumer.progress();

    assertThat(consumer.drainFailures()).hasSize(1);
    assertThat(handshakes).containsExactly(producer, producer);
  }
}
