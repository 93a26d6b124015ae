package io.kvbridge.runtime.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.lease.EndReason;
import io.kvbridge.lease.Lease;
import io.kvbridge.lease.LeaseEnd;
import io.kvbridge.lease.LeaseEndView;
import io.kvbridge.lease.LeaseTable;
import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.lease.LeaseToken;
import io.kvbridge.lease.LeaseView;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.time.ManualClock;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ConnectorCountersTest {

  /** An event the counters forgot would never reach the user's observer, metrics included. */
  @Test
  void overridesEveryObserverEventSoNoneIsDropped() {
    List<String> notForwarded =
        Arrays.stream(ConnectorObserver.class.getMethods())
            .filter(m -> !Modifier.isStatic(m.getModifiers()))
            .filter(m -> !declaredByTheCounters(m))
            .map(Method::toGenericString)
            .toList();

    assertThat(notForwarded).isEmpty();
  }

  @Test
  void grantsAreCountedAndForwarded() {
    Recorder seen = new Recorder();
    ConnectorCounters counters = new ConnectorCounters(seen);

    counters.granted(LEASE);
    counters.granted(LEASE);

    assertThat(counters.granted()).isEqualTo(2);
    assertThat(seen.events).containsExactly("granted r1", "granted r1");
  }

  @Test
  void renewalsAreForwarded() {
    Recorder seen = new Recorder();
    ConnectorCounters counters = new ConnectorCounters(seen);

    counters.renewed(LEASE);

    assertThat(seen.events).containsExactly("renewed r1");
  }

  @Test
  void failedTransfersAreCountedAndForwarded() {
    Recorder seen = new Recorder();
    ConnectorCounters counters = new ConnectorCounters(seen);

    counters.transferFailed("r1", "gone");
    counters.transferFailed("r2", "refused");

    assertThat(counters.loadsFailed()).isEqualTo(2);
    assertThat(seen.events).containsExactly("failed r1 gone", "failed r2 refused");
  }

  @Test
  void rejectedInputIsCountedByKindAndForwarded() {
    Recorder seen = new Recorder();
    ConnectorCounters counters = new ConnectorCounters(seen);

    counters.rejected(RejectedInput.WRONG_TOKEN, "bad token");

    assertThat(counters.rejected()).containsEntry(RejectedInput.WRONG_TOKEN, 1L);
    assertThat(seen.events).containsExactly("rejected WRONG_TOKEN bad token");
  }

  @Test
  void heartbeatsAreCountedAsRenewingOrIgnoredAndForwarded() {
    Recorder seen = new Recorder();
    ConnectorCounters counters = new ConnectorCounters(seen);

    counters.heartbeatReceived(true);
    counters.heartbeatReceived(false);
    counters.heartbeatReceived(false);

    assertThat(counters.heartbeatsRenewed()).isEqualTo(1);
    assertThat(counters.heartbeatsIgnored()).isEqualTo(2);
    assertThat(seen.events).containsExactly("heartbeat true", "heartbeat false", "heartbeat false");
  }

  @Test
  void aTablesRenewalsAndEndsReachAnObserverThatReadsViewsAndAreCounted() {
    List<String> seen = new ArrayList<>();
    ConnectorCounters counters =
        new ConnectorCounters(
            new ConnectorObserver() {
              @Override
              public void renewed(LeaseView lease) {
                seen.add("renewed " + lease.requestId() + " to " + lease.deadlineNanos());
              }

              @Override
              public void ended(LeaseEndView end) {
                seen.add("ended " + end.lease().requestId() + " " + end.reason());
              }
            });
    ManualClock clock = new ManualClock();
    LeaseTable table =
        new LeaseTable(
            clock, new LeaseTerms(Duration.ofSeconds(30), Duration.ofSeconds(90)), counters);
    Lease lease = table.grant("r1", List.of(1), 1, new byte[] {1});
    clock.advance(Duration.ofSeconds(1));

    table.renew("r1", lease.token().value());
    table.revoke("r1", "aborted");

    assertThat(seen)
        .containsExactly(
            "renewed r1 to " + (clock.nanoTime() + Duration.ofSeconds(30).toNanos()),
            "ended r1 " + EndReason.REVOKED);
    assertThat(counters.ended()).containsEntry(EndReason.REVOKED, 1L);
  }

  @Test
  void endsAreCountedByReasonAndForwarded() {
    Recorder seen = new Recorder();
    ConnectorCounters counters = new ConnectorCounters(seen);

    counters.ended(new LeaseEnd(LEASE, EndReason.values()[0], 5, "done"));

    assertThat(counters.ended()).containsEntry(EndReason.values()[0], 1L);
    assertThat(seen.events).containsExactly("ended r1 " + EndReason.values()[0]);
  }

  private static final Lease LEASE =
      new Lease("r1", LeaseToken.random(), List.of(1, 2), 0, 10, 20, 1, 0);

  /** Records the events that reach the user's observer. */
  private static final class Recorder implements ConnectorObserver {
    final List<String> events = new ArrayList<>();

    @Override
    public void granted(Lease lease) {
      events.add("granted " + lease.requestId());
    }

    @Override
    public void renewed(Lease lease) {
      events.add("renewed " + lease.requestId());
    }

    @Override
    public void ended(LeaseEnd end) {
      events.add("ended " + end.lease().requestId() + " " + end.reason());
    }

    @Override
    public void transferFailed(String requestId, String reason) {
      events.add("failed " + requestId + " " + reason);
    }

    @Override
    public void rejected(RejectedInput kind, String detail) {
      events.add("rejected " + kind + " " + detail);
    }

    @Override
    public void heartbeatReceived(boolean renewed) {
      events.add("heartbeat " + renewed);
    }
  }

  private static boolean declaredByTheCounters(Method m) {
    try {
      ConnectorCounters.class.getDeclaredMethod(m.getName(), m.getParameterTypes());
      return true;
    } catch (NoSuchMethodException e) {
      return false;
    }
  }
}
