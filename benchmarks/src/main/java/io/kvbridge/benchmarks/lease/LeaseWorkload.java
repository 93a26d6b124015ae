package io.kvbridge.benchmarks.lease;

import io.kvbridge.lease.Lease;
import io.kvbridge.lease.LeaseEnd;
import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.time.ManualClock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A lease book filled with a steady population of live leases, and the operations the benchmarks
 * time on it.
 *
 * <p>Leases are granted one {@link #spacing()} apart, so the population spans exactly one lease
 * duration: right after {@link #fill()} nothing is due, and each further {@link #grantNext()} makes
 * exactly one more of the oldest leases due. Request ids come from a ring of {@code live + spare}
 * ids precomputed at construction, so no timed operation builds strings; ids of expired leases are
 * reused by later grants.
 *
 * <p>Heartbeats ({@link #renewNext()}) visit live leases in grant order while the clock moves half
 * a spacing each, so every lease is renewed twice per lease duration and none expires; with a
 * deadline index each renewal moves the soonest lease to the back.
 *
 * <p>Threads: confined to one benchmark thread.
 */
public final class LeaseWorkload {

  /** Lease duration, as vLLM's default {@code kv_lease_duration}. */
  public static final Duration LEASE = Duration.ofSeconds(30);

  /** Maximum lifetime long enough that heartbeats can keep leases alive for the whole run. */
  public static final Duration MAX_LIFETIME = Duration.ofDays(36_500);

  /** The blocks of every lease: what they are does not affect the bookkeeping. */
  public static final List<Integer> BLOCKS = List.of(7, 8);

  private final ManualClock clock = new ManualClock();
  private final LeaseBook book;
  private final int live;
  private final Duration spacing;
  private final Duration halfSpacing;
  private final String[] ids;
  private final String[] tokens;
  private final String[] freshIds;
  private final String[] freshTokens;
  private int oldest;
  private int next;
  private int renewCursor;

  /**
   * Creates an empty workload.
   *
   * @param live the number of live leases {@link #fill()} grants
   * @param spare how many leases beyond {@code live} may be granted before a sweep ends some
   * @param fresh how many short-lived leases (granted and acknowledged by the caller) are in flight
   *     at most, beside the population
   */
  public LeaseWorkload(LeaseBookKind kind, int live, int spare, int fresh) {
    if (live < 1 || spare < 0 || fresh < 1) {
      throw new IllegalArgumentException(
          "need live >= 1, spare >= 0, fresh >= 1; got " + live + ", " + spare + ", " + fresh);
    }
    this.book = kind.create(clock, new LeaseTerms(LEASE, MAX_LIFETIME));
    this.live = live;
    this.spacing = LEASE.dividedBy(live);
    this.halfSpacing = spacing.dividedBy(2);
    if (halfSpacing.isZero()) {
      throw new IllegalArgumentException("too many live leases for one lease duration: " + live);
    }
    this.ids = new String[live + spare];
    this.tokens = new String[live + spare];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = "req-" + i;
    }
    this.freshIds = new String[fresh];
    this.freshTokens = new String[fresh];
    for (int i = 0; i < fresh; i++) {
      freshIds[i] = "fresh-" + i;
    }
  }

  /** Grants the {@code live} leases of the population. */
  public LeaseWorkload fill() {
    for (int i = 0; i < live; i++) {
      grantNext();
    }
    return this;
  }

  /** The book under test. */
  public LeaseBook book() {
    return book;
  }

  /** The clock the book reads. */
  public ManualClock clock() {
    return clock;
  }

  /** The time between two grants of the population: one lease duration over {@code live}. */
  public Duration spacing() {
    return spacing;
  }

  /** Advances the clock one spacing and grants the next lease of the ring. */
  public void grantNext() {
    clock.advance(spacing);
    Lease lease = book.grant(ids[next], BLOCKS);
    tokens[next] = lease.token().value();
    next = (next + 1) % ids.length;
  }

  /** Sweeps, and checks that exactly the oldest {@code expected} leases ended. */
  public List<LeaseEnd> expireExpecting(int expected) {
    List<LeaseEnd> ended = book.expire();
    checkSwept(ended, expected);
    return ended;
  }

  /**
   * Checks that {@code ended} are exactly the oldest {@code expected} leases, in any order, and
   * forgets them.
   */
  public void checkSwept(List<LeaseEnd> ended, int expected) {
    if (ended.size() != expected) {
      throw new IllegalStateException(
          "sweep ended " + ended.size() + " leases, the workload made " + expected + " due");
    }
    Set<String> endedIds = new HashSet<>();
    for (LeaseEnd end : ended) {
      endedIds.add(end.lease().requestId());
    }
    for (int i = 0; i < expected; i++) {
      if (!endedIds.contains(ids[oldest])) {
        throw new IllegalStateException(
            "sweep did not end " + ids[oldest] + ", one of the oldest leases; ended " + endedIds);
      }
      oldest = (oldest + 1) % ids.length;
    }
  }

  /** A heartbeat for the next live lease in grant order; the clock moves half a spacing. */
  public boolean renewNext() {
    clock.advance(halfSpacing);
    int slot = (oldest + renewCursor) % ids.length;
    renewCursor = (renewCursor + 1) % live;
    return book.renew(ids[slot], tokens[slot]);
  }

  /** Grants the short-lived lease {@code i} (of {@code fresh}) at the current time. */
  public Lease grantFresh(int i) {
    Lease lease = book.grant(freshIds[i], BLOCKS);
    freshTokens[i] = lease.token().value();
    return lease;
  }

  /** Confirms the short-lived lease {@code i}, which {@link #grantFresh} granted. */
  public boolean confirmFresh(int i) {
    return book.confirm(freshIds[i], freshTokens[i]);
  }

  /** Acknowledges the short-lived lease {@code i}, which {@link #confirmFresh} confirmed. */
  public boolean acknowledgeFresh(int i) {
    return book.acknowledge(freshIds[i], freshTokens[i]);
  }
}
