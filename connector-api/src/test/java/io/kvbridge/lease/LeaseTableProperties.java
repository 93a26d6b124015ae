package io.kvbridge.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.time.ManualClock;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Random sequences of lease events: every lease ends exactly once, a sweep leaves no lease past its
 * deadline, and no deadline passes the maximum lifetime.
 */
class LeaseTableProperties {

  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration MAX = Duration.ofSeconds(120);
  private static final byte[] READ = new byte[32];

  record Step(int kind, int request, int advanceSeconds, boolean rightToken) {}

  @Provide
  Arbitrary<List<Step>> steps() {
    return Combinators.combine(
            Arbitraries.integers().between(0, 6),
            Arbitraries.integers().between(0, 15),
            Arbitraries.integers().between(0, 40),
            Arbitraries.of(true, true, true, false))
        .as(Step::new)
        .list()
        .ofMaxSize(200);
  }

  @Property(tries = 300)
  void everyLeaseEndsExactlyOnceAndNeverOutlivesItsLimits(@ForAll("steps") List<Step> steps) {
    ManualClock clock = new ManualClock();
    Map<String, Integer> endCount = new HashMap<>();
    Set<String> everGranted = new HashSet<>();
    Set<String> grantedIds = new HashSet<>();
    LeaseTable table =
        new LeaseTable(
            clock,
            new LeaseTerms(LEASE, MAX),
            new LeaseListener() {
              @Override
              public void ended(LeaseEnd end) {
                endCount.merge(end.lease().token().value(), 1, Integer::sum);
                if (end.reason() == EndReason.EXPIRED) {
                  assertThat(end.endedAtNanos())
                      .isGreaterThanOrEqualTo(end.lease().deadlineNanos());
                }
                if (end.reason() == EndReason.READ) {
                  assertThat(end.endedAtNanos()).isLessThan(end.lease().deadlineNanos());
                }
              }
            });
    Map<String, Lease> live = new HashMap<>();
    for (Step step : steps) {
      String id = "r" + step.request();
      Lease known = live.get(id);
      String token =
          known != null && step.rightToken() ? known.token().value() : LeaseToken.random().value();
      switch (step.kind()) {
        case 0 -> {
          if (table.find(id).isEmpty()) {
            Lease lease = table.grant(id, List.of(step.request()), 1, READ);
            live.put(id, lease);
            everGranted.add(lease.token().value());
            grantedIds.add(id);
          }
        }
        case 1 -> table.acknowledge(id, token, claim(READ));
        case 5 -> table.confirm(id, token, claim(READ));
        case 2 -> table.renew(id, token);
        case 3 -> table.revoke(id, "abort");
        case 4 -> {
          table.expire();
          assertThat(liveLeases(table, grantedIds))
              .allMatch(
                  lease -> lease.deadlineNanos() > clock.nanoTime(),
                  "no lease past its deadline survives a sweep");
        }
        default -> clock.advance(Duration.ofSeconds(step.advanceSeconds()));
      }
      table.find(id).ifPresentOrElse(l -> live.put(id, l), () -> live.remove(id));
      for (Lease lease : liveLeases(table, grantedIds)) {
        assertThat(lease.deadlineNanos()).isLessThanOrEqualTo(lease.maxDeadlineNanos());
      }
    }
    clock.advance(MAX);
    table.expire();

    assertThat(table.size()).isZero();
    assertThat(endCount.keySet()).isEqualTo(everGranted);
    assertThat(endCount.values()).allMatch(count -> count == 1);
  }

  /** The table's live leases among the requests ever granted, the only ones it can hold. */
  private static List<Lease> liveLeases(LeaseTable table, Set<String> grantedIds) {
    return grantedIds.stream().flatMap(id -> table.find(id).stream()).toList();
  }

  /** What a consumer claims it read: a lease granted with exactly {@code binding}. */
  private static ReadClaim claim(byte[] binding) {
    return new ReadClaim("d", binding, 0, granted -> Arrays.equals(granted, binding));
  }
}
