package io.kvbridge.spring.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.lease.EndReason;
import io.kvbridge.lease.Lease;
import io.kvbridge.lease.LeaseEnd;
import io.kvbridge.lease.LeaseToken;
import io.kvbridge.observe.RejectedInput;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class MicrometerConnectorObserverTest {

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final MicrometerConnectorObserver observer =
      new MicrometerConnectorObserver(registry, "prefill-0");
  private final Lease lease = new Lease("r-1", LeaseToken.random(), List.of(1, 2), 0, 10, 20, 1, 0);

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
}
