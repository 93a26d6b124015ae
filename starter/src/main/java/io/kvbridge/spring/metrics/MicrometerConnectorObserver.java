package io.kvbridge.spring.metrics;

import io.kvbridge.lease.EndReason;
import io.kvbridge.lease.Lease;
import io.kvbridge.lease.LeaseEnd;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.observe.RejectedInput;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Records one engine's connector events as Micrometer meters, each tagged {@code engine}. Every
 * meter is registered up front, so dashboards show zeros rather than gaps and an event costs one
 * increment.
 *
 * <p>Thread-safe: meters and the active-lease count are atomic.
 */
final class MicrometerConnectorObserver implements ConnectorObserver {

  private final AtomicLong activeLeases = new AtomicLong();
  private final Counter granted;
  private final Map<EndReason, Counter> ended = new EnumMap<>(EndReason.class);
  private final Timer transferDuration;
  private final DistributionSummary transferBytes;
  private final Counter transferFailures;
  private final Map<RejectedInput, Counter> rejected = new EnumMap<>(RejectedInput.class);
  private final Counter heartbeatsRenewed;
  private final Counter heartbeatsIgnored;

  MicrometerConnectorObserver(MeterRegistry registry, String engineId) {
    Tags engine = Tags.of("engine", engineId);
    this.granted =
        Counter.builder("kvbridge.leases.granted")
            .description("Leases a producer granted on finished prefills")
            .tags(engine)
            .register(registry);
    for (EndReason reason : EndReason.values()) {
      ended.put(
          reason,
          Counter.builder("kvbridge.leases.ended")
              .description("Leases that ended, by reason")
              .tags(engine)
              .tag("reason", tagValue(reason))
              .register(registry));
    }
    Gauge.builder("kvbridge.leases.active", activeLeases, AtomicLong::get)
        .description("Leases a producer holds now")
        .tags(engine)
        .register(registry);
    this.transferDuration =
        Timer.builder("kvbridge.transfer.duration")
            .description("Time from posting a read to the producer's acknowledgement")
            .tags(engine)
            .register(registry);
    this.transferBytes =
        DistributionSummary.builder("kvbridge.transfer.bytes")
            .description("Bytes moved by validated reads")
            .baseUnit("bytes")
            .tags(engine)
            .register(registry);
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
    this.heartbeatsRenewed = heartbeats(registry, engine, "renewed");
    this.heartbeatsIgnored = heartbeats(registry, engine, "ignored");
  }

  private static Counter heartbeats(MeterRegistry registry, Tags engine, String outcome) {
    return Counter.builder("kvbridge.heartbeats")
        .description("Lease renewals a producer received, by outcome")
        .tags(engine)
        .tag("outcome", outcome)
        .register(registry);
  }

  private static String tagValue(Enum<?> value) {
    return value.name().toLowerCase(Locale.ROOT);
  }

  @Override
  public void granted(Lease lease) {
    granted.increment();
    activeLeases.incrementAndGet();
  }

  @Override
  public void ended(LeaseEnd end) {
    ended.get(end.reason()).increment();
    activeLeases.decrementAndGet();
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
  public void rejected(RejectedInput kind, String detail) {
    rejected.get(kind).increment();
  }

  @Override
  public void heartbeatReceived(boolean renewed) {
    (renewed ? heartbeatsRenewed : heartbeatsIgnored).increment();
  }
}
