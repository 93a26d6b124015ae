package io.kvbridge.spring.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.lease.EndReason;
import io.kvbridge.lease.Lease;
import io.kvbridge.lease.LeaseEnd;
import io.kvbridge.lease.LeaseToken;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.transfer.TransferTelemetry;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class MicrometerConnectorObserverTest {

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final MicrometerConnectorObserver observer =
      new MicrometerConnectorObserver(registry, "prefill-0");
  private final Lease lease = new Lease("r-1", LeaseToken.random(), List.of(1, 2), 0, 10, 20, 1, 0);

  /** A READ of three 1 KiB pieces, as a transport measured it. */
  private static final TransferTelemetry MEASURED =
      new TransferTelemetry(Duration.ofNanos(15_000), Duration.ofNanos(250_000), 3072, 3);

  @Test
  void everyMeterExistsAtZeroBeforeAnyEvent() {
    assertThat(registry.get("kvbridge.leases.granted").tag("engine", "prefill-0").counter().count())
        .isZero();
    assertThat(registry.get("kvbridge.leases.ended").counters()).hasSize(EndReason.values().length);
    assertThat(registry.get("kvbridge.rejected").counters()).hasSize(RejectedInput.values().length);
    assertThat(registry.get("kvbridge.heartbeats").counters()).hasSize(2);
    assertThat(registry.get("kvbridge.leases.active").gauge().value()).isZero();
    assertThat(registry.get("kvbridge.transfer.duration").timer().count()).isZero();
    assertThat(registry.get("kvbridge.transfer.bytes").summary().count()).isZero();
    assertThat(registry.get("kvbridge.transfer.failures").counter().count()).isZero();
  }

  @Test
  void grantedLeaseIsCountedAndActive() {
    observer.granted(lease);

    assertThat(registry.get("kvbridge.leases.granted").counter().count()).isEqualTo(1);
    assertThat(registry.get("kvbridge.leases.active").gauge().value()).isEqualTo(1);
  }

  @Test
  void endedLeaseIsCountedByReasonAndNoLongerActive() {
    observer.granted(lease);
    observer.ended(new LeaseEnd(lease, EndReason.EXPIRED, 11, "deadline passed"));

    assertThat(registry.get("kvbridge.leases.ended").tag("reason", "expired").counter().count())
        .isEqualTo(1);
    assertThat(registry.get("kvbridge.leases.ended").tag("reason", "read").counter().count())
        .isZero();
    assertThat(registry.get("kvbridge.leases.active").gauge().value()).isZero();
  }

  @Test
  void completedTransferRecordsDurationAndBytes() {
    observer.transferCompleted("r-1", 4096, TimeUnit.MILLISECONDS.toNanos(3));

    assertThat(registry.get("kvbridge.transfer.duration").timer().totalTime(TimeUnit.MILLISECONDS))
        .isEqualTo(3);
    assertThat(registry.get("kvbridge.transfer.bytes").summary().totalAmount()).isEqualTo(4096);
    assertThat(registry.get("kvbridge.transfer.bytes").summary().getId().getBaseUnit())
        .isEqualTo("bytes");
  }

  @Test
  void failedTransferIsCounted() {
    observer.transferFailed("r-1", "lease ends within the safety margin");

    assertThat(registry.get("kvbridge.transfer.failures").counter().count()).isEqualTo(1);
  }

  @Test
  void rejectedInputIsCountedByKind() {
    observer.rejected(RejectedInput.WRONG_TOKEN, "completion of r-1");

    assertThat(registry.get("kvbridge.rejected").tag("kind", "wrong_token").counter().count())
        .isEqualTo(1);
  }

  @Test
  void heartbeatsAreCountedByOutcome() {
    observer.heartbeatReceived(true);
    observer.heartbeatReceived(true);
    observer.heartbeatReceived(false);

    assertThat(registry.get("kvbridge.heartbeats").tag("outcome", "renewed").counter().count())
        .isEqualTo(2);
    assertThat(registry.get("kvbridge.heartbeats").tag("outcome", "ignored").counter().count())
        .isEqualTo(1);
  }

  @Test
  void metersOfTwoEnginesAreKeptApart() {
    MicrometerConnectorObserver other = new MicrometerConnectorObserver(registry, "prefill-1");
    other.granted(lease);

    assertThat(registry.get("kvbridge.leases.granted").tag("engine", "prefill-0").counter().count())
        .isZero();
    assertThat(registry.get("kvbridge.leases.granted").tag("engine", "prefill-1").counter().count())
        .isEqualTo(1);
  }

  @Test
  void everyMeterOfKnownTagsExistsAtZeroBeforeAnyEvent() {
    assertThat(registry.get("kvbridge.leases.age").timers()).hasSize(EndReason.values().length);
    assertThat(registry.get("kvbridge.leases.blocks").gauge().value()).isZero();
    assertThat(registry.get("kvbridge.transfer.post.duration").timer().count()).isZero();
    assertThat(registry.get("kvbridge.transfer.descriptors").summary().count()).isZero();
    assertThat(registry.get("kvbridge.notifications.failed").counters())
        .hasSize(MicrometerConnectorObserver.NOTIFICATION_KINDS.size());
    assertThat(registry.get("kvbridge.handshake.duration").timers()).hasSize(2);
    assertThat(registry.find("kvbridge.clock.offset").gauges()).isEmpty();
  }

  @Test
  void leaseAgeAtItsEndIsRecordedByReasonAndItsBlocksAreNoLongerHeld() {
    observer.granted(lease);
    assertThat(registry.get("kvbridge.leases.blocks").gauge().value()).isEqualTo(2);

    observer.ended(
        new LeaseEnd(lease, EndReason.READ, TimeUnit.MILLISECONDS.toNanos(7), "read by decode-0"));

    assertThat(
            registry
                .get("kvbridge.leases.age")
                .tag("reason", "read")
                .timer()
                .totalTime(TimeUnit.MILLISECONDS))
        .isEqualTo(7);
    assertThat(registry.get("kvbridge.leases.age").tag("reason", "expired").timer().count())
        .isZero();
    assertThat(registry.get("kvbridge.leases.blocks").gauge().value()).isZero();
  }

  @Test
  void postedReadRecordsPostTimeAndDescriptors() {
    observer.readPosted("r-1", 12, 4096, TimeUnit.MICROSECONDS.toNanos(30));

    assertThat(
            registry
                .get("kvbridge.transfer.post.duration")
                .timer()
                .totalTime(TimeUnit.MICROSECONDS))
        .isEqualTo(30);
    assertThat(registry.get("kvbridge.transfer.descriptors").summary().totalAmount()).isEqualTo(12);
  }

  @Test
  void aConfirmedLeaseRecordsItsRoundTrip() {
    observer.leaseConfirmed("r-1", TimeUnit.MICROSECONDS.toNanos(250));

    assertThat(
            registry
                .get("kvbridge.transfer.confirm.duration")
                .timer()
                .totalTime(TimeUnit.MICROSECONDS))
        .isEqualTo(250);
  }

  @Test
  void transportMetersAppearOnlyWithTheFirstMeasurement() {
    assertThat(registry.find("kvbridge.transport.post.duration").meters()).isEmpty();
    assertThat(registry.find("kvbridge.transport.transfer.duration").meters()).isEmpty();
    assertThat(registry.find("kvbridge.transport.bytes").meters()).isEmpty();
    assertThat(registry.find("kvbridge.transport.descriptors").meters()).isEmpty();

    observer.transferTelemetry("r-1", MEASURED);

    assertThat(registry.get("kvbridge.transport.post.duration").tag("engine", "prefill-0").timer())
        .isNotNull();
  }

  @Test
  void transportMeasurementsAreRecordedAsTimersInSecondsAndSummariesOfBytesAndDescriptors() {
    observer.transferTelemetry("r-1", MEASURED);
    observer.transferTelemetry("r-1", MEASURED);

    Timer post =
        registry.get("kvbridge.transport.post.duration").tag("engine", "prefill-0").timer();
    Timer transfer =
        registry.get("kvbridge.transport.transfer.duration").tag("engine", "prefill-0").timer();
    DistributionSummary bytes =
        registry.get("kvbridge.transport.bytes").tag("engine", "prefill-0").summary();
    DistributionSummary descriptors =
        registry.get("kvbridge.transport.descriptors").tag("engine", "prefill-0").summary();
    assertThat(post.getId().getBaseUnit()).isEqualTo("seconds");
    assertThat(post.count()).isEqualTo(2);
    assertThat(post.totalTime(TimeUnit.MICROSECONDS)).isEqualTo(2 * 15);
    assertThat(transfer.getId().getBaseUnit()).isEqualTo("seconds");
    assertThat(transfer.totalTime(TimeUnit.MICROSECONDS)).isEqualTo(2 * 250);
    assertThat(bytes.getId().getBaseUnit()).isEqualTo("bytes");
    assertThat(bytes.totalAmount()).isEqualTo(2 * 3072);
    assertThat(descriptors.getId().getBaseUnit()).isEqualTo("descriptors");
    assertThat(descriptors.totalAmount()).isEqualTo(2 * 3);
  }

  @Test
  void transportMeasurementsAreScrapedUnderTheirPrometheusNames() {
    PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    new MicrometerConnectorObserver(prometheus, "decode-0").transferTelemetry("r-1", MEASURED);

    String scrape = prometheus.scrape();

    assertThat(scrape)
        .contains("# TYPE kvbridge_transport_post_duration_seconds histogram")
        .contains("# TYPE kvbridge_transport_transfer_duration_seconds histogram")
        .contains("# TYPE kvbridge_transport_bytes histogram")
        .contains("# TYPE kvbridge_transport_descriptors histogram")
        .contains("kvbridge_transport_post_duration_seconds_sum{engine=\"decode-0\"} 1.5E-5")
        .contains("kvbridge_transport_transfer_duration_seconds_sum{engine=\"decode-0\"} 2.5E-4")
        .contains("kvbridge_transport_bytes_sum{engine=\"decode-0\"} 3072.0")
        .contains("kvbridge_transport_descriptors_sum{engine=\"decode-0\"} 3.0");
  }

  @Test
  void failedNotificationIsCountedByMessageKind() {
    observer.notificationFailed("decode-0", "ack");

    assertThat(
            registry.get("kvbridge.notifications.failed").tag("message", "ack").counter().count())
        .isEqualTo(1);
    assertThat(
            registry
                .get("kvbridge.notifications.failed")
                .tag("message", "heartbeat")
                .counter()
                .count())
        .isZero();
  }

  @Test
  void handshakesAreTimedByOutcome() {
    observer.handshakeCompleted("prefill-1", TimeUnit.MILLISECONDS.toNanos(4));
    observer.handshakeFailed("prefill-2", 0, "refused");

    assertThat(
            registry
                .get("kvbridge.handshake.duration")
                .tag("outcome", "accepted")
                .timer()
                .totalTime(TimeUnit.MILLISECONDS))
        .isEqualTo(4);
    assertThat(registry.get("kvbridge.handshake.duration").tag("outcome", "failed").timer().count())
        .isEqualTo(1);
  }

  @Test
  void clockEstimateOfEachProducerIsAGaugeInSecondsHoldingTheLatestEstimate() {
    observer.clockEstimated("prefill-1", 2_000_000, 500_000);
    observer.clockEstimated("prefill-1", -3_000_000, 100_000);
    observer.clockEstimated("prefill-2", 1_000, 1_000);

    assertThat(registry.get("kvbridge.clock.offset").tag("producer", "prefill-1").gauge().value())
        .isEqualTo(-0.003);
    assertThat(
            registry.get("kvbridge.clock.uncertainty").tag("producer", "prefill-1").gauge().value())
        .isEqualTo(0.0001);
    assertThat(registry.get("kvbridge.clock.offset").gauges()).hasSize(2);
  }
}
