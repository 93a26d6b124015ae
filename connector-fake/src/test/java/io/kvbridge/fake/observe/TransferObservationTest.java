package io.kvbridge.fake.observe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.fake.FakeTransportProvider;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.observe.TraceContext;
import io.kvbridge.observe.TransferSpans;
import io.kvbridge.observe.TransferTracer;
import io.kvbridge.runtime.ConnectorRegistry;
import io.kvbridge.runtime.PullConnector;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.FinishDecision;
import io.kvbridge.spi.FinishedRequest;
import io.kvbridge.spi.FinishedTransfers;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.tck.Prompts;
import io.kvbridge.time.ManualClock;
import io.kvbridge.transfer.ForwardingTransport;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.TransferTelemetry;
import io.kvbridge.transfer.Transport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What a connector tells its observer and its tracer along a request's transfer path: the post,
 * what the transport measured of each finished read, handshakes, clock estimates and failed
 * notifications; P's lease span and D's load span with its phases, joined through the transfer
 * parameters.
 */
class TransferObservationTest {

  private static final KvLayout LAYOUT = KvLayout.opaque("observe/fp16", 4, 256, 32);

  private final ManualClock clock = new ManualClock();
  private final String fabric = "observe-" + UUID.randomUUID();
  private final List<KvConnector> connectors = new ArrayList<>();
  private final List<KvMemory> memories = new ArrayList<>();
  private final Set<String> received = new HashSet<>();
  private final Map<String, String> failed = new HashMap<>();

  private final RecordingObserver producerEvents = new RecordingObserver();
  private final RecordingObserver consumerEvents = new RecordingObserver();
  private final RecordingTracer producerTracer = new RecordingTracer();
  private final RecordingTracer consumerTracer = new RecordingTracer();

  private KvConnector producer;
  private KvConnector consumer;

  /** Wraps each transport of the consumers started from now on. */
  private UnaryOperator<Transport> consumerTransports = UnaryOperator.identity();

  @AfterEach
  void close() {
    connectors.forEach(KvConnector::close);
    memories.forEach(KvMemory::close);
  }

  // ---------------------------------------------------------------- observer events

  @Test
  void postedReadReportsItsDescriptorsAndTheBytesTheTransferMoves() {
    startTraced();
    load("d-1", prefill("p-1", 3));

    assertThat(consumerEvents.posted).hasSize(1);
    RecordingObserver.Posted posted = consumerEvents.posted.get(0);
    assertThat(posted.requestId()).isEqualTo("d-1");
    assertThat(posted.bytes()).isEqualTo(3L * LAYOUT.blockBytes());
    assertThat(posted.descriptors()).isPositive();
    assertThat(consumerEvents.transferBytes).containsExactly(posted.bytes());
  }

  @Test
  void whatTheTransportMeasuredOfAFinishedReadIsReportedBeforeTheReadIsReleased() {
    consumerTransports = transport -> new Measuring(transport, false);
    startTraced();

    load("d-1", prefill("p-1", 3));

    assertThat(received).contains("d-1");
    assertThat(consumerEvents.measured)
        .containsExactly(
            new RecordingObserver.Measured(
                "d-1",
                new TransferTelemetry(
                    Measuring.POST, Measuring.TRANSFER, 3L * LAYOUT.blockBytes(), 1)));
  }

  @Test
  void aReadThatFailedIsNotMeasured() {
    consumerTransports = transport -> new Measuring(transport, true);
    startTraced();

    load("d-1", prefill("p-1", 1));

    assertThat(failed).containsKey("d-1");
    assertThat(consumerEvents.measured).isEmpty();
  }

  @Test
  void aTransportThatMeasuresNothingReportsNoMeasurement() {
    startTraced();

    load("d-1", prefill("p-1", 1));

    assertThat(received).contains("d-1");
    assertThat(consumerEvents.measured).isEmpty();
  }

  @Test
  void handshakeIsReportedOnceWithTheProducersClockEstimate() {
    startTraced();
    String producerId = producer.settings().engineId();
    load("d-1", prefill("p-1", 1));
    load("d-2", prefill("p-2", 1));

    assertThat(consumerEvents.events)
        .containsOnlyOnce("handshake completed: " + producerId)
        .contains("clock: " + producerId)
        .noneMatch(e -> e.startsWith("handshake failed"));
  }

  @Test
  void handshakeWithAProducerThatIsNotThereIsReportedFailed() {
    startTraced();
    TransferParams params = prefill("p-1", 1);
    producer.close();

    LoadMatch match = matchUntilDecided("d-1", params);

    assertThat(match).isInstanceOf(LoadMatch.Unavailable.class);
    assertThat(consumerEvents.events)
        .contains("handshake failed: " + params.producerEngineId())
        .noneMatch(e -> e.startsWith("handshake completed"));
  }

  @Test
  void heartbeatThatCannotReachItsProducerIsReportedAsAFailedNotification() {
    startTraced();
    TransferParams params = prefill("p-1", 1);
    assertThat(matchUntilDecided("d-1", params)).isInstanceOf(LoadMatch.Ready.class);
    // The consumer's transport no longer knows the producer's agent: sending to it fails.
    ((PullConnector) consumer)
        .transport()
        .invalidateRemote(((PullConnector) producer).transport().agentName());

    clock.advance(Duration.ofSeconds(6));
    consumer.worker().sweep();

    assertThat(consumerEvents.events)
        .contains("notification failed: heartbeat to " + params.producerEngineId());
  }

  // ---------------------------------------------------------------- spans

  @Test
  void consumersLoadSpanIsAChildOfTheProducersLeaseSpanThroughTheParams() {
    startTraced();
    TransferParams params = prefill("p-1", 2);
    load("d-1", params);

    RecordingTracer.Span lease = producerTracer.named(TransferSpans.LEASE).get(0);
    RecordingTracer.Span load = consumerTracer.named(TransferSpans.LOAD).get(0);
    assertThat(params.traceContext()).isInstanceOf(TraceContext.W3c.class);
    assertThat(params.toMap()).containsEntry("traceparent", lease.context().traceparent());
    assertThat(load.remoteParent).isEqualTo(lease.context());
  }

  @Test
  void loadSpanGoesThroughConfirmReadAndValidateAndEndsReceived() {
    startTraced();
    load("d-1", prefill("p-1", 2));

    RecordingTracer.Span load = consumerTracer.named(TransferSpans.LOAD).get(0);
    assertThat(load.children())
        .extracting(s -> s.name)
        .containsExactly(
            TransferSpans.LOAD_CONFIRM, TransferSpans.LOAD_READ, TransferSpans.LOAD_VALIDATE);
    assertThat(load.children()).allMatch(s -> s.ends == 1 && s.error.isEmpty());
    assertThat(load.children().get(0).events).containsExactly(TransferSpans.CONFIRM_SENT);
    assertThat(load.children().get(1).tags)
        .containsEntry(TransferSpans.BYTES, Long.toString(2L * LAYOUT.blockBytes()))
        .containsKey(TransferSpans.DESCRIPTORS);
    assertThat(load.children().get(2).tags).containsEntry(TransferSpans.REPLY, "ack");
    assertThat(load.tags).containsEntry(TransferSpans.OUTCOME, "received");
    assertThat(load.ends).isEqualTo(1);
  }

  @Test
  void leaseSpanCoversTheGrantAndEndsWithTheLeasesEndReason() {
    startTraced();
    load("d-1", prefill("p-1", 1));
    awaitTrue(
        () -> {
          drain(producer);
          return producerTracer.named(TransferSpans.LEASE).get(0).ends == 1;
        });

    RecordingTracer.Span lease = producerTracer.named(TransferSpans.LEASE).get(0);
    assertThat(lease.tags).containsEntry(TransferSpans.END_REASON, "read");
    assertThat(lease.children()).extracting(s -> s.name).containsExactly(TransferSpans.LEASE_GRANT);
    assertThat(lease.children().get(0).ends).isEqualTo(1);
  }

  @Test
  void expiredLeaseEndsItsSpanAsExpired() {
    startTraced();
    prefill("p-1", 1);

    clock.advance(Duration.ofSeconds(31));
    producer.worker().sweep();

    RecordingTracer.Span lease = producerTracer.named(TransferSpans.LEASE).get(0);
    assertThat(lease.tags).containsEntry(TransferSpans.END_REASON, "expired");
    assertThat(lease.ends).isEqualTo(1);
  }

  @Test
  void failedLoadEndsItsSpanFailedWithTheReason() {
    startTraced();
    TransferParams params = prefill("p-1", 1);
    assertThat(matchUntilDecided("d-1", params)).isInstanceOf(LoadMatch.Ready.class);
    consumer.scheduler().afterAllocate("d-1", List.of(0));
    // The lease ends inside the safety margin: the read is not started.
    clock.advance(Duration.ofSeconds(29));
    consumer.worker().startLoad(consumer.scheduler().buildStepMetadata());

    RecordingTracer.Span load = consumerTracer.named(TransferSpans.LOAD).get(0);
    assertThat(load.tags).containsEntry(TransferSpans.OUTCOME, "failed");
    assertThat(load.error).hasValueSatisfying(r -> assertThat(r).contains("safety margin"));
    assertThat(load.ends).isEqualTo(1);
  }

  @Test
  void malformedTraceparentIsCountedAndIgnoredAndTheLoadIsServed() {
    startTraced();
    Map<String, Object> map = new HashMap<>(prefill("p-1", 1).toMap());
    map.put("traceparent", "00-not-a-trace-01");

    load("d-1", TransferParams.fromMap(map));

    assertThat(received).contains("d-1");
    assertThat(consumer.status().rejected())
        .containsEntry(RejectedInput.MALFORMED_TRACE_CONTEXT, 1L);
    assertThat(consumerTracer.named(TransferSpans.LOAD).get(0).remoteParent)
        .isInstanceOf(TraceContext.Ignored.class);
  }

  @Test
  void untracedProducerWritesNoTraceFieldsInTheParams() {
    start(ConnectorObserver.NONE, TransferTracer.NONE, ConnectorObserver.NONE, TransferTracer.NONE);

    TransferParams params = prefill("p-1", 1);

    assertThat(params.traceContext()).isEqualTo(TraceContext.ABSENT);
    assertThat(params.toMap()).doesNotContainKeys("traceparent", "tracestate");
    load("d-1", params);
    assertThat(received).contains("d-1");
  }

  @Test
  void tracingCallsPerRequestDoNotGrowWithTheBlocksRead() {
    startTraced();
    load("d-warmup", prefill("p-warmup", 1)); // the handshake is behind us
    int before = consumerTracer.calls.get();
    load("d-1", prefill("p-1", 1));
    int oneBlock = consumerTracer.calls.get() - before;
    before = consumerTracer.calls.get();
    load("d-2", prefill("p-2", 8));
    int eightBlocks = consumerTracer.calls.get() - before;

    assertThat(consumerEvents.posted.get(2).descriptors())
        .isGreaterThan(consumerEvents.posted.get(1).descriptors());
    assertThat(eightBlocks).isEqualTo(oneBlock);
  }

  // ---------------------------------------------------------------- harness

  private void startTraced() {
    start(producerEvents, producerTracer, consumerEvents, consumerTracer);
  }

  private void start(
      ConnectorObserver producerObserver,
      TransferTracer producerTracing,
      ConnectorObserver consumerObserver,
      TransferTracer consumerTracing) {
    producer = engine("prefill", Role.PRODUCER, producerObserver, producerTracing);
    consumer = engine("decode", Role.CONSUMER, consumerObserver, consumerTracing);
  }

  private KvConnector engine(
      String name, Role role, ConnectorObserver observer, TransferTracer tracer) {
    ConnectorSettings settings =
        ConnectorSettings.builder(
                FakeTransportProvider.TYPE,
                name + "-" + UUID.randomUUID().toString().substring(0, 8))
            .role(role)
            .leaseTerms(new LeaseTerms(Duration.ofSeconds(30), Duration.ofSeconds(120)))
            .heartbeatInterval(Duration.ofSeconds(5))
            .safetyMargin(Duration.ofSeconds(2))
            .clock(clock)
            .observer(observer)
            .tracer(tracer)
            .properties(Map.of(FakeTransportProvider.FABRIC, fabric))
            .build();
    KvConnector connector =
        ConnectorRegistry.of(List.of(new FakeTransportProvider()))
            .create(
                settings, role == Role.CONSUMER ? consumerTransports : UnaryOperator.identity());
    KvMemory memory = connector.worker().allocateKvCache(LAYOUT);
    connector.worker().registerKvCache(memory, LAYOUT);
    connectors.add(connector);
    memories.add(memory);
    return connector;
  }

  private TransferParams prefill(String requestId, int blocks) {
    int tokens = blocks * LAYOUT.tokensPerBlock();
    List<Integer> ids = IntStream.range(0, blocks).boxed().toList();
    FinishDecision decision =
        producer
            .scheduler()
            .requestFinished(
                new FinishedRequest(
                    requestId, ids, Prompts.of(requestId, tokens), tokens, false, true));
    return decision.params().orElseThrow();
  }

  private LoadMatch matchUntilDecided(String requestId, TransferParams params) {
    TokenIds prompt = Prompts.of(params.requestId(), params.tokens());
    LoadMatch[] match = {consumer.scheduler().matchRemote(requestId, prompt, 0, params)};
    awaitTrue(
        () -> {
          if (match[0] instanceof LoadMatch.Pending) {
            drain(producer);
            drain(consumer);
            match[0] = consumer.scheduler().matchRemote(requestId, prompt, 0, params);
          }
          return !(match[0] instanceof LoadMatch.Pending);
        });
    return match[0];
  }

  /**
   * Loads {@code params} into every other block of the consumer (so no two pieces are adjacent and
   * each block is a descriptor of its own) and steps both engines until the load is decided.
   */
  private void load(String requestId, TransferParams params) {
    if (!(matchUntilDecided(requestId, params) instanceof LoadMatch.Ready)) {
      return;
    }
    int blocks = params.blockIds().size();
    consumer
        .scheduler()
        .afterAllocate(requestId, IntStream.range(0, blocks).map(i -> 2 * i).boxed().toList());
    consumer.worker().startLoad(consumer.scheduler().buildStepMetadata());
    awaitTrue(
        () -> {
          drain(consumer);
          drain(producer);
          return received.contains(requestId) || failed.containsKey(requestId);
        });
  }

  private void drain(KvConnector connector) {
    if (connector == null) {
      return;
    }
    FinishedTransfers finished = connector.worker().getFinished(Set.of());
    received.addAll(finished.doneReceiving());
    finished.failedLoads().forEach(f -> failed.put(f.requestId(), f.reason()));
  }

  /**
   * A transport that measures every transfer it passes on, as one that measures its own would,
   * except that it answers whenever it is asked before the release: a test sees when the runtime
   * asks. Its reads may all fail.
   */
  private static final class Measuring extends ForwardingTransport {

    static final Duration POST = Duration.ofNanos(7_000);
    static final Duration TRANSFER = Duration.ofNanos(42_000);

    private final boolean failReads;
    private final Set<Long> released = ConcurrentHashMap.newKeySet();

    Measuring(Transport delegate, boolean failReads) {
      super(delegate);
      this.failReads = failReads;
    }

    @Override
    public TransferStatus status(TransferHandle handle) {
      return failReads ? new TransferStatus.Failed("failed on purpose") : super.status(handle);
    }

    @Override
    public void release(TransferHandle handle) {
      released.add(handle.id());
      super.release(handle);
    }

    @Override
    public Optional<TransferTelemetry> telemetry(TransferHandle handle) {
      return released.contains(handle.id())
          ? Optional.empty()
          : Optional.of(new TransferTelemetry(POST, TRANSFER, handle.bytes(), 1));
    }
  }

  private static void awaitTrue(java.util.function.BooleanSupplier condition) {
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(2))
        .until(condition::getAsBoolean);
  }
}
