package io.kvbridge.runtime.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.integrity.ChecksumInput;
import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.integrity.ReadDigest;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.lease.LeaseToken;
import io.kvbridge.observe.ConnectorObserver;
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
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.wire.ProtocolMessage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The consumer's load state machine driven directly, on a clock the test sets, against a stub
 * transport: what each transition reports to the engine, the observer and the producer.
 */
class ConsumerTest {

  /** Blocks of 4 tokens of 4 bytes; 16 blocks. */
  private static final KvLayout LAYOUT = KvLayout.opaque("m", 4, 4, 16);

  private static final long MS = 1_000_000;

  private long now = 1_000 * MS;
  private long tick;
  private final List<String> failed = new ArrayList<>();
  private final List<Long> postedNanos = new ArrayList<>();
  private final List<Long> completedNanos = new ArrayList<>();
  private final StubTransport transport = new StubTransport();
  private final StubMemory memory = new StubMemory(0x1000, 256);
  private final ConnectorSettings settings =
      ConnectorSettings.builder("stub", "decode-0")
          .safetyMargin(Duration.ofSeconds(2))
          .replyTimeout(Duration.ofSeconds(5))
          .handshakeTimeout(Duration.ofSeconds(3))
          .clock(
              () -> {
                long t = now;
                now += tick;
                return t;
              })
          .build();
  private final ConnectorCounters counters =
      new ConnectorCounters(
          new ConnectorObserver() {
            @Override
            public void transferFailed(String requestId, String reason) {
              failed.add(requestId + ": " + reason);
            }

            @Override
            public void readPosted(String requestId, int descriptors, long bytes, long nanos) {
              postedNanos.add(nanos);
            }

            @Override
            public void transferCompleted(String requestId, long bytes, long nanos) {
              completedNanos.add(nanos);
            }
          });
  private final Consumer consumer = consumer();
  private int loadsMade;

  private Consumer consumer() {
    Ranks ranks = new Ranks(List.of(transport));
    ranks.register(0, new KvRegions(LAYOUT, List.of(memory)));
    Consumer c = new Consumer(settings, ranks, counters);
    c.start();
    return c;
  }

  @AfterEach
  void closeTheHandshakeThreads() {
    consumer.handshakes().close();
  }

  /** A load of one block's 4 tokens from producer {@code producer}, in {@code state}. */
  private Load load(String producer, Load.State state, long deadline) {
    return load(producer, state, deadline, now + 10_000 * MS, now);
  }

  /**
   * A load of one block's 4 tokens from producer {@code producer}, in {@code state}, whose lease
   * ends at {@code leaseDeadline} on the producer's clock, read since {@code readStartedAt} if it
   * got that far.
   */
  private Load load(
      String producer, Load.State state, long deadline, long leaseDeadline, long readStartedAt) {
    loadsMade++;
    int checksum =
        ChecksumScheme.CRC32C.checksum(
            ChecksumInput.of(List.of(new ChecksumInput.Range(memory, 0, 16))));
    TransferParams params =
        new TransferParams(
            producer,
            1L,
            "p-" + loadsMade,
            List.of(3),
            4,
            TokenIds.of(new int[4]).digest(4),
            LeaseToken.random().value(),
            leaseDeadline,
            Optional.empty(),
            ChecksumScheme.CRC32C,
            List.of(List.of(checksum)));
    Load load =
        new Load(
            "d-" + loadsMade,
            params,
            0,
            consumer.handshakes().epoch(),
            state == Load.State.CONFIRMING ? deadline : Long.MAX_VALUE);
    consumer.loads().add(load);
    if (state != Load.State.CONFIRMING) {
      TestLoads.advance(load, peer(producer), List.of(5), state, deadline, readStartedAt);
    }
    return load;
  }

  private static ProducerPeer peer(String engineId) {
    return new ProducerPeer(
        engineId,
        "local://" + engineId,
        1L,
        List.of(
            new ProducerPeer.Rank(
                engineId + "-agent", LAYOUT, List.of(0x9000L), 0, MemoryKind.DRAM)),
        new ClockSync(new ClockOffset(0, 0), 0));
  }

  private List<ProtocolMessage> sent() throws Exception {
    List<ProtocolMessage> out = new ArrayList<>();
    for (StubTransport.Sent s : transport.sent) {
      out.add(ProtocolMessage.decode(s.message()));
    }
    return out;
  }

  @Test
  void cancellingAnUnknownLoadReportsThatThereWasNone() {
    assertThat(consumer.cancel("nobody", "gone")).isFalse();
  }

  @Test
  void cancellingALoadEndsItsSpanAndReleasesItsLease() throws Exception {
    Load load = load("prefill-0", Load.State.AWAITING_ALLOCATION, Long.MAX_VALUE);
    LoadTest.RecordingSpan span = new LoadTest.RecordingSpan("load");
    load.traced(span);

    assertThat(consumer.cancel(load.requestId(), "engine gave up")).isTrue();

    assertThat(consumer.inFlight()).isZero();
    assertThat(span.tags).containsExactly(TransferSpans.OUTCOME + "=cancelled");
    assertThat(span.ended).isTrue();
    assertThat(sent())
        .containsExactly(
            new ProtocolMessage.Release(
                load.lease(), "decode-0", "cancelled on D: engine gave up"));
    assertThat(consumer.cancel(load.requestId(), "again")).isFalse();
  }

  @Test
  void cancellingARefusedLoadForgetsTheRefusal() {
    Load load = load("prefill-0", Load.State.CONFIRMING, Long.MAX_VALUE);
    consumer.refuse(load, "producer said no");

    assertThat(consumer.cancel(load.requestId(), "engine gave up")).isTrue();
    assertThat(consumer.cancel(load.requestId(), "engine gave up")).isFalse();
  }

  @Test
  void closeFailsLoadsHoldingBlocksAndReleasesEveryLeaseNotAwaitingAReply() throws Exception {
    Load confirming = load("prefill-0", Load.State.CONFIRMING, Long.MAX_VALUE);
    Load allocating = load("prefill-0", Load.State.AWAITING_ALLOCATION, Long.MAX_VALUE);
    Load ready = load("prefill-0", Load.State.READY, Long.MAX_VALUE);
    Load replying = load("prefill-0", Load.State.AWAITING_REPLY, Long.MAX_VALUE);
    LoadTest.RecordingSpan span = new LoadTest.RecordingSpan("load");
    confirming.traced(span);

    consumer.close();

    assertThat(consumer.inFlight()).isZero();
    assertThat(span.tags).containsExactly(TransferSpans.OUTCOME + "=closed");
    assertThat(consumer.drainFailures())
        .containsExactly(
            new LoadFailure(ready.requestId(), List.of(5), "connector closed"),
            new LoadFailure(replying.requestId(), List.of(5), "connector closed"));
    assertThat(failed)
        .containsExactly(
            ready.requestId() + ": connector closed", replying.requestId() + ": connector closed");
    assertThat(sent())
        .extracting(m -> ((ProtocolMessage.Release) m).lease())
        .containsExactly(allocating.lease(), ready.lease());
  }

  @Test
  void aConfirmationEndsTheConfirmPhaseAndKeepsTheLaterDeadline() {
    Load load = load("prefill-0", Load.State.CONFIRMING, Long.MAX_VALUE);
    LoadTest.RecordingSpan span = new LoadTest.RecordingSpan("load");
    load.traced(span);
    load.startPhase(TransferSpans.LOAD_CONFIRM);
    load.confirmSent(peer("prefill-0"), ReadDigest.fromBytes(new byte[32]), 0, now);

    consumer.confirmed(load, 5L);

    assertThat(span.children.get(0).ended).isTrue();
    assertThat(load.phase()).isSameAs(io.kvbridge.observe.TransferSpan.NONE);
    assertThat(load.state()).isEqualTo(Load.State.AWAITING_ALLOCATION);
    assertThat(load.producerDeadline()).isEqualTo(load.params().deadlineNanos());
  }

  @Test
  void allocationForALoadNotAwaitingItIsRefused() {
    Load load = load("prefill-0", Load.State.CONFIRMING, Long.MAX_VALUE);

    assertThatThrownBy(() -> consumer.afterAllocate(load.requestId(), List.of(1)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "afterAllocate for " + load.requestId() + " without a matchRemote that answered Ready");
  }

  @Test
  void tooFewAllocatedBlocksFailTheLoadWithNoneToGiveBack() {
    Load load = load("prefill-0", Load.State.AWAITING_ALLOCATION, Long.MAX_VALUE);

    consumer.afterAllocate(load.requestId(), List.of());

    assertThat(consumer.drainFailures())
        .containsExactly(
            new LoadFailure(
                load.requestId(), List.of(), "engine allocated 0 blocks, the load needs 1"));
    assertThat(failed).hasSize(1);
    assertThat(consumer.inFlight()).isZero();
  }

  @Test
  void aLoadNoLongerReadyIsNotPosted() {
    Load load = load("prefill-0", Load.State.AWAITING_ALLOCATION, Long.MAX_VALUE);

    consumer.post(new LoadSpec(load.requestId(), load.params(), List.of(5)));

    assertThat(load.state()).isEqualTo(Load.State.AWAITING_ALLOCATION);
    assertThat(transport.indexedPosts).isEmpty();
    assertThat(consumer.drainFailures()).isEmpty();
  }

  /**
   * A load answered ready while its CONFIRM is in flight (sent at once to a producer already
   * handshaken), whose confirmation must arrive by {@code deadline}; lent block 5 unless {@code
   * allocate} is false.
   */
  private Load lentBeforeConfirmation(long deadline, boolean allocate) {
    Load load = load("prefill-0", Load.State.CONFIRMING, deadline);
    load.confirmSent(peer("prefill-0"), ReadDigest.fromBytes(new byte[32]), 0, now);
    load.answeredBeforeConfirmation();
    if (allocate) {
      consumer.afterAllocate(load.requestId(), List.of(5));
    }
    return load;
  }

  @Test
  void aLoadLentBeforeItsConfirmationIsReadOnlyOnceConfirmed() {
    Load load = lentBeforeConfirmation(now + 8_000 * MS, true);

    assertThat(consumer.drainReady())
        .extracting(LoadSpec::requestId)
        .containsExactly(load.requestId());
    consumer.post(new LoadSpec(load.requestId(), load.params(), load.localBlocks()));

    assertThat(transport.indexedPosts).isEmpty();
    assertThat(load.state()).isEqualTo(Load.State.READY);
    assertThat(consumer.drainReady()).isEmpty();

    consumer.confirmed(load, now + 10_000 * MS);

    assertThat(load.state()).isEqualTo(Load.State.READING);
    assertThat(transport.indexedPosts).hasSize(1);
  }

  @Test
  void aLoadConfirmedBeforeTheEngineAsksIsReadWhenItAsks() {
    Load load = lentBeforeConfirmation(now + 8_000 * MS, true);

    consumer.confirmed(load, now + 10_000 * MS);

    assertThat(load.state()).isEqualTo(Load.State.READY);
    assertThat(transport.indexedPosts).isEmpty();
    consumer.post(new LoadSpec(load.requestId(), load.params(), load.localBlocks()));
    assertThat(load.state()).isEqualTo(Load.State.READING);
  }

  @Test
  void aLoadLentBeforeItsConfirmationFailsWhenNoConfirmationComesInTime() {
    Load load = lentBeforeConfirmation(now + 8_000 * MS, true);
    consumer.post(new LoadSpec(load.requestId(), load.params(), load.localBlocks()));

    consumer.progress();
    assertThat(consumer.drainFailures()).isEmpty();
    now += 8_000 * MS;
    consumer.progress();

    assertThat(consumer.drainFailures())
        .containsExactly(
            new LoadFailure(
                load.requestId(),
                List.of(5),
                "producer prefill-0 did not confirm the lease within 8000 ms"));
    assertThat(transport.indexedPosts).isEmpty();
    assertThat(consumer.inFlight()).isZero();
  }

  @Test
  void aLoadThatFailsBetweenItsAnswerAndItsAllocationTakesTheAllocationQuietly() {
    Load load = lentBeforeConfirmation(now, false);

    consumer.progress();
    consumer.afterAllocate(load.requestId(), List.of(5));

    assertThat(consumer.drainFailures())
        .containsExactly(
            new LoadFailure(
                load.requestId(),
                List.of(),
                "producer prefill-0 did not confirm the lease within 8000 ms"));
    assertThatThrownBy(() -> consumer.afterAllocate(load.requestId(), List.of(5)))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void aLeaseEndingInsideTheSafetyMarginIsNotRead() {
    Load load = load("prefill-0", Load.State.READY, Long.MAX_VALUE, now + 1_500 * MS, now);

    consumer.post(new LoadSpec(load.requestId(), load.params(), load.localBlocks()));

    assertThat(consumer.drainFailures())
        .extracting(LoadFailure::reason)
        .containsExactly("lease ends in 1500 ms, inside the safety margin of 2000 ms; not reading");
    assertThat(transport.indexedPosts).isEmpty();
  }

  @Test
  void aLeaseEndingExactlyAtTheSafetyMarginIsRead() {
    Load load = load("prefill-0", Load.State.READY, Long.MAX_VALUE, now + 2_000 * MS, now);

    consumer.post(new LoadSpec(load.requestId(), load.params(), load.localBlocks()));

    assertThat(load.state()).isEqualTo(Load.State.READING);
    assertThat(transport.indexedPosts).hasSize(1);
  }

  @Test
  void aPostedReadIsTaggedOnItsPhaseAndReportedWithTheTimePosting() {
    Load load = load("prefill-0", Load.State.READY, Long.MAX_VALUE);
    LoadTest.RecordingSpan span = new LoadTest.RecordingSpan("load");
    load.traced(span);
    tick = 7;

    consumer.post(new LoadSpec(load.requestId(), load.params(), load.localBlocks()));

    LoadTest.RecordingSpan read = span.children.get(0);
    assertThat(read.name).isEqualTo(TransferSpans.LOAD_READ);
    assertThat(read.tags)
        .containsExactly(
            TransferSpans.BLOCKS + "=1",
            TransferSpans.BYTES + "=16",
            TransferSpans.DESCRIPTORS + "=1");
    assertThat(read.events).containsExactly(TransferSpans.POSTED);
    assertThat(postedNanos).containsExactly(7L);
    assertThat(load.state()).isEqualTo(Load.State.READING);
    assertThat(load.stateDeadline()).isEqualTo(load.producerDeadline());
  }

  @Test
  void aReadTheTransportRefusesFailsTheLoad() {
    Load load = load("prefill-0", Load.State.READY, Long.MAX_VALUE);
    transport.refuseNextIndexedPost = true;

    consumer.post(new LoadSpec(load.requestId(), load.params(), load.localBlocks()));

    assertThat(consumer.drainFailures())
        .extracting(LoadFailure::reason)
        .containsExactly("read could not be posted: peer invalidated");
  }

  private Load reading() {
    Load load = load("prefill-0", Load.State.READY, Long.MAX_VALUE);
    consumer.post(new LoadSpec(load.requestId(), load.params(), load.localBlocks()));
    assertThat(load.state()).isEqualTo(Load.State.READING);
    return load;
  }

  @Test
  void aFinishedReadIsReleasedAndItsCompletionSentThenTheReplyAwaited() throws Exception {
    Load load = reading();
    TransferHandle handle = load.reads().get(0).handle();
    transport.status = TransferStatus.DONE;

    consumer.progress();

    assertThat(transport.releasedHandles).containsExactly(handle);
    assertThat(sent()).hasOnlyElementsOfType(ProtocolMessage.Completion.class).hasSize(1);
    assertThat(load.state()).isEqualTo(Load.State.AWAITING_REPLY);
    assertThat(load.stateDeadline()).isEqualTo(now + 5_000 * MS);
  }

  @Test
  void aReadThatFinishesBetweenTwoLooksOfOneRoundIsCompletedInThatRound() throws Exception {
    Load load = reading();
    transport.status = TransferStatus.DONE;
    // The round's first look finds the READ in progress; it is done by the time its stage is
    // checked, with nothing left in flight: the round must move the load on, not wait for another.
    transport.looksInProgress = 1;

    consumer.progress();

    assertThat(sent()).hasOnlyElementsOfType(ProtocolMessage.Completion.class).hasSize(1);
    assertThat(load.state()).isEqualTo(Load.State.AWAITING_REPLY);
  }

  @Test
  void aFinishedReadWhoseTelemetryCannotBeReadStillCompletes() {
    Load load = reading();
    transport.status = TransferStatus.DONE;
    transport.refuseTelemetry = true;

    consumer.progress();

    assertThat(load.state()).isEqualTo(Load.State.AWAITING_REPLY);
    assertThat(consumer.drainFailures()).isEmpty();
  }

  @Test
  void aCompletionThatCannotBeSentFailsTheLoad() {
    Load load = reading();
    transport.status = TransferStatus.DONE;
    transport.refuseNotifications = true;

    consumer.progress();

    assertThat(consumer.drainFailures())
        .containsExactly(
            new LoadFailure(
                load.requestId(), List.of(5), "could not send the completion to prefill-0"));
  }

  @Test
  void aReadStillInProgressFailsExactlyAtItsDeadline() {
    Load load = reading();
    now = load.stateDeadline() - 1;
    consumer.progress();
    assertThat(consumer.drainFailures()).isEmpty();

    now = load.stateDeadline();
    consumer.progress();

    assertThat(consumer.drainFailures())
        .extracting(LoadFailure::reason)
        .containsExactly(
            "read did not finish before the lease deadline; its bytes are not trusted");
  }

  @Test
  void aLoadAwaitingItsReplyFailsExactlyAtTheReplyTimeout() {
    Load load = load("prefill-0", Load.State.AWAITING_REPLY, now + 5_000 * MS);
    now += 5_000 * MS - 1;
    consumer.progress();
    assertThat(consumer.inFlight()).isEqualTo(1);

    now += 1;
    consumer.progress();

    assertThat(consumer.drainFailures())
        .containsExactly(
            new LoadFailure(
                load.requestId(), List.of(5), "no ACK from producer prefill-0 within 5000 ms"));
  }

  @Test
  void anUnconfirmedLeaseIsRefusedAfterTheHandshakeAndReplyTimeouts() {
    Load load = load("prefill-0", Load.State.CONFIRMING, now);

    consumer.progress();

    assertThat(failed)
        .containsExactly(
            load.requestId() + ": producer prefill-0 did not confirm the lease within 8000 ms");
    assertThat(consumer.inFlight()).isZero();
  }

  @Test
  void loadsOfAProducerThatWentAwayEndWithTheReason() {
    Load confirming = load("prefill-0", Load.State.CONFIRMING, Long.MAX_VALUE);
    Load replying = load("prefill-0", Load.State.AWAITING_REPLY, Long.MAX_VALUE);
    consumer.handshakes().producerGone("prefill-0", "deregistered");

    consumer.progress();

    assertThat(failed)
        .containsExactly(
            confirming.requestId() + ": producer prefill-0 is gone: deregistered",
            replying.requestId() + ": producer prefill-0 is gone: deregistered");
    assertThat(consumer.inFlight()).isZero();
  }

  @Test
  void producersThatWentAwayAreForgottenOnceNoOlderLoadRemains() {
    consumer.handshakes().producerGone("prefill-0", "deregistered");
    load("prefill-1", Load.State.AWAITING_ALLOCATION, Long.MAX_VALUE);

    consumer.progress();

    assertThat(consumer.handshakes().goneSince("prefill-0", 0)).isEmpty();
  }

  @Test
  void aGoneProducerIsRememberedWhileALoadOlderThanItsDepartureRemains() {
    load("prefill-1", Load.State.AWAITING_ALLOCATION, Long.MAX_VALUE);
    consumer.handshakes().producerGone("prefill-0", "deregistered");

    consumer.progress();

    assertThat(consumer.handshakes().goneSince("prefill-0", 0)).hasValue("deregistered");
  }

  @Test
  void aReceivedLoadReportsTheTimeSinceItsReadStarted() {
    Load load =
        load("prefill-0", Load.State.AWAITING_REPLY, Long.MAX_VALUE, now + 10_000 * MS, now - 250);

    consumer.receivedAfterAck(load);

    assertThat(completedNanos).containsExactly(250L);
    assertThat(consumer.drainReceived()).containsExactly(load.requestId());
  }
}
