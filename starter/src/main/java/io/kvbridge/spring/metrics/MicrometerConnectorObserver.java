package io.kvbridge.spring.metrics;

import io.kvbridge.lease.EndReason;
import io.kvbridge.lease.Lease;
import io.kvbridge.lease.LeaseEnd;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.transfer.TransferTelemetry;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Records one engine's connector events as Micrometer meters, each tagged {@code engine}. Every
 * meter whose tags are known up front is registered up front, so dashboards show zeros rather than
 * gaps and an event costs one increment; meters per notification kind and per producer appear with
 * their first event, and so do the meters of what the transport measured, which only a transport
 * that measures its transfers (NIXL with {@code kvbridge.nixl.telemetry=true}) reports. Timers and
 * distributions publish histograms, so a Prometheus scrape carries buckets for quantiles across
 * engines.
 *
 * <p>Thread-safe: meters and the gauges' values are atomic.
 */
final class MicrometerConnectorObserver implements ConnectorObserver {

  /** The kinds of protocol notification, as {@link #notificationFailed} names them. */
  static final List<String> NOTIFICATION_KINDS =
      List.of(
          "confirm", "completion", "release", "heartbeat", "ack", "nack", "confirmed", "renewed");

  private final MeterRegistry registry;
  private final Tags engine;
  private final AtomicLong activeLeases = new AtomicLong();
  private final AtomicLong blocksHeld = new AtomicLong();
  private final Counter granted;
  private final Map<EndReason, Counter> ended = new EnumMap<>(EndReason.class);
  private final Map<EndReason, Timer> leaseAge = new EnumMap<>(EndReason.class);
  private final Timer transferDuration;
  private final Timer postDuration;
  private final Timer confirmDuration;
  private final DistributionSummary transferBytes;
  private final DistributionSummary descriptors;
  private final Counter transferFailures;
  private final Map<RejectedInput, Counter> rejected = new EnumMap<>(RejectedInput.class);
  private final Map<String, Counter> failedNotifications = new ConcurrentHashMap<>();
  private final Counter heartbeatsRenewed;
  private final Counter heartbeatsIgnored;
  private final Timer handshakesAccepted;
  private final Timer handshakesFailed;
  private final Map<String, long[]> clocks = new ConcurrentHashMap<>();
  private volatile TransportMeters transportMeters;

  MicrometerConnectorObserver(MeterRegistry registry, String engineId) {
    this.registry = registry;
    this.engine = Tags.of("engine", engineId);
    this.granted =
        Counter.builder("kvbridge.leases.granted")
            .description("Leases a producer granted on finished prefills")
            .tags(engine)
            .register(registry);
    for (EndReason reason : EndReason.values()) {
      ended.put(
          reason,
          Counter.builder("kvbridge.leases.ended")
              .description("Leases that ended, by reason; reason=expired are requests D never read")
              .tags(engine)
              .tag("reason", tagValue(reason))
              .register(registry));
      leaseAge.put(
          reason,
          histogramTimer(
              registry,
              "kvbridge.leases.age",
              "How long a lease held its blocks, from grant to end, by end reason",
              engine.and("reason", tagValue(reason)),
              Duration.ofMillis(1),
              Duration.ofMinutes(10)));
    }
    Gauge.builder("kvbridge.leases.active", activeLeases, AtomicLong::get)
        .description("Leases a producer holds now")
        .tags(engine)
        .register(registry);
    Gauge.builder("kvbridge.leases.blocks", blocksHeld, AtomicLong::get)
        .description("KV blocks a producer holds for consumers now, over every live lease")
        .baseUnit("blocks")
        .tags(engine)
        .register(registry);
    this.transferDuration =
        histogramTimer(
            registry,
            "kvbridge.transfer.duration",
            "Time from posting a read to the producer's acknowledgement",
            engine,
            Duration.ofMillis(1),
            Duration.ofMinutes(1));
    this.postDuration =
        histogramTimer(
            registry,
            "kvbridge.transfer.post.duration",
            "Time to plan a read's descriptors and post them to the transport",
            engine,
            Duration.ofNanos(10_000),
            Duration.ofSeconds(10));
    this.confirmDuration =
        histogramTimer(
            registry,
            "kvbridge.transfer.confirm.duration",
            "Time from a consumer's CONFIRM to the producer's CONFIRMED",
            engine,
            Duration.ofNanos(10_000),
            Duration.ofSeconds(10));
    this.transferBytes =
        histogramSummary(
            registry,
            "kvbridge.transfer.bytes",
            "Bytes moved by validated reads",
            "bytes",
            engine,
            1024.0,
            64.0 * 1024 * 1024 * 1024);
    this.descriptors =
        histogramSummary(
            registry,
            "kvbridge.transfer.descriptors",
            "Descriptors posted per read, over every rank pair",
            "descriptors",
            engine,
            1.0,
            1_048_576.0);
    this.transferFailures =
        Counter.builder("kvbridge.transfer.failures")
            .description("Loads that failed and fell to the load-failure policy")
            .tags(engine)
            .register(registry);
    for (RejectedInput kind : RejectedInput.values()) {
      rejected.put(
          kind,
          Counter.builder("kvbridge.rejected")
              .description("Untrusted inputs refused, by kind")
              .tags(engine)
              .tag("kind", tagValue(kind))
              .register(registry));
    }
    for (String kind : NOTIFICATION_KINDS) {
      failedNotifications.put(kind, notificationCounter(kind));
    }
    this.heartbeatsRenewed = heartbeats(registry, engine, "renewed");
    this.heartbeatsIgnored = heartbeats(registry, engine, "ignored");
    this.handshakesAccepted = handshakes(registry, engine, "accepted");
    this.handshakesFailed = handshakes(registry, engine, "failed");
  }

  /** A timer with a percentile histogram between {@code min} and {@code max}. */
  private static Timer histogramTimer(
      MeterRegistry registry,
      String name,
      String description,
      Tags tags,
      Duration min,
      Duration max) {
    return Timer.builder(name)
        .description(description)
        .tags(tags)
        .publishPercentileHistogram()
        .minimumExpectedValue(min)
        .maximumExpectedValue(max)
        .register(registry);
  }

  /**
   * A summary in {@code baseUnit} with a percentile histogram between {@code min} and {@code max}.
   */
  private static DistributionSummary histogramSummary(
      MeterRegistry registry,
      String name,
      String description,
      String baseUnit,
      Tags tags,
      double min,
      double max) {
    return DistributionSummary.builder(name)
        .description(description)
        .baseUnit(baseUnit)
        .tags(tags)
        .publishPercentileHistogram()
        .minimumExpectedValue(min)
        .maximumExpectedValue(max)
        .register(registry);
  }

  private static Counter heartbeats(MeterRegistry registry, Tags engine, String outcome) {
    return Counter.builder("kvbridge.heartbeats")
        .description("Lease renewals a producer received, by outcome")
        .tags(engine)
        .tag("outcome", outcome)
        .register(registry);
  }

  private static Timer handshakes(MeterRegistry registry, Tags engine, String outcome) {
    return histogramTimer(
        registry,
        "kvbridge.handshake.duration",
        "Handshakes a consumer made with producers, by outcome; one refused before it started"
            + " counts as failed in no time",
        engine.and("outcome", outcome),
        Duration.ofNanos(10_000),
        Duration.ofMinutes(1));
  }

  private Counter notificationCounter(String kind) {
    return Counter.builder("kvbridge.notifications.failed")
        .description("Protocol notifications the transport could not send, by message kind")
        .tags(engine)
        .tag("message", kind)
        .register(registry);
  }

  private static String tagValue(Enum<?> value) {
    return value.name().toLowerCase(Locale.ROOT);
  }

  @Override
  public void granted(Lease lease) {
    granted.increment();
    activeLeases.incrementAndGet();
    blocksHeld.addAndGet(lease.blockIds().size());
  }

  @Override
  public void ended(LeaseEnd end) {
    ended.get(end.reason()).increment();
    leaseAge
        .get(end.reason())
        .record(
            Math.max(0, end.endedAtNanos() - end.lease().grantedAtNanos()), TimeUnit.NANOSECONDS);
    activeLeases.decrementAndGet();
    blocksHeld.addAndGet(-end.lease().blockIds().size());
  }

  @Override
  public void transferCompleted(String requestId, long bytes, long nanos) {
    transferDuration.record(nanos, TimeUnit.NANOSECONDS);
    transferBytes.record(bytes);
  }

  @Override
  public void transferFailed(String requestId, String reason) {
    transferFailures.increment();
  }

  @Override
  public void leaseConfirmed(String requestId, long nanos) {
    confirmDuration.record(nanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public void readPosted(String requestId, int descriptorCount, long bytes, long nanos) {
    postDuration.record(nanos, TimeUnit.NANOSECONDS);
    descriptors.record(descriptorCount);
  }

  @Override
  public void transferTelemetry(String requestId, TransferTelemetry telemetry) {
    TransportMeters meters = transportMeters;
    if (meters == null) {
      // Two first measurements at once register the same meters: the registry returns the one
      // it has for an id it knows.
      meters = TransportMeters.register(registry, engine);
      transportMeters = meters;
    }
    meters.record(telemetry);
  }

  @Override
  public void notificationFailed(String toEngineId, String message) {
    // The kinds are the protocol's; any other name is counted under its own tag once seen.
    failedNotifications.computeIfAbsent(message, this::notificationCounter).increment();
  }

  @Override
  public void rejected(RejectedInput kind, String detail) {
    rejected.get(kind).increment();
  }

  @Override
  public void heartbeatReceived(boolean renewed) {
    (renewed ? heartbeatsRenewed : heartbeatsIgnored).increment();
  }

  @Override
  public void handshakeCompleted(String producerEngineId, long nanos) {
    handshakesAccepted.record(nanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public void handshakeFailed(String producerEngineId, long nanos, String reason) {
    handshakesFailed.record(nanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public void clockEstimated(String producerEngineId, long offsetNanos, long uncertaintyNanos) {
    long[] clock = clocks.computeIfAbsent(producerEngineId, this::clockGauges);
    synchronized (clock) {
      clock[0] = offsetNanos;
      clock[1] = uncertaintyNanos;
    }
  }

  /** Registers the clock gauges of one producer; they read the array the estimates update. */
  private long[] clockGauges(String producer) {
    long[] clock = new long[2];
    TimeGauge.builder("kvbridge.clock.offset", clock, TimeUnit.NANOSECONDS, c -> read(c, 0))
        .description("How far a producer's clock reads ahead of this consumer's, as estimated now")
        .tags(engine)
        .tag("producer", producer)
        .register(registry);
    TimeGauge.builder("kvbridge.clock.uncertainty", clock, TimeUnit.NANOSECONDS, c -> read(c, 1))
        .description("Half the round trip of the exchange the clock offset estimate comes from")
        .tags(engine)
        .tag("producer", producer)
        .register(registry);
    return clock;
  }

  private static double read(long[] clock, int index) {
    synchronized (clock) {
      return clock[index];
    }
  }

  /** The meters of what a transport measured of each finished READ, as it reports them. */
  private record TransportMeters(
      Timer postTime,
      Timer transferTime,
      DistributionSummary bytes,
      DistributionSummary descriptors) {

    static TransportMeters register(MeterRegistry registry, Tags engine) {
      return new TransportMeters(
          histogramTimer(
              registry,
              "kvbridge.transport.post.duration",
              "Time to post each READ, as the transport measured it",
              engine,
              Duration.ofNanos(1_000),
              Duration.ofSeconds(10)),
          histogramTimer(
              registry,
              "kvbridge.transport.transfer.duration",
              "Time each READ took to finish, as the transport measured it",
              engine,
              Duration.ofNanos(1_000),
              Duration.ofMinutes(1)),
          histogramSummary(
              registry,
              "kvbridge.transport.bytes",
              "Bytes each READ moved, as the transport measured it",
              "bytes",
              engine,
              1024.0,
              64.0 * 1024 * 1024 * 1024),
          histogramSummary(
              registry,
              "kvbridge.transport.descriptors",
              "Descriptors each READ moved, as the transport measured it",
              "descriptors",
              engine,
              1.0,
              1_048_576.0));
    }

    void record(TransferTelemetry telemetry) {
      postTime.record(telemetry.postTime());
      transferTime.record(telemetry.transferTime());
      bytes.record(telemetry.bytes());
      descriptors.record(telemetry.descriptors());
    }
  }
}
