package io.kvbridge.benchmarks.lease;

import io.kvbridge.lease.EndReason;
import io.kvbridge.lease.Lease;
import io.kvbridge.lease.LeaseEnd;
import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.lease.LeaseToken;
import io.kvbridge.time.MonotonicClock;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The part the two baselines share: live leases in one hash map keyed by request id, so grant,
 * acknowledge and renew are O(1); the subclasses differ only in how {@link #expire()} walks the
 * map. Each lease costs what it costs in {@link io.kvbridge.lease.LeaseTable}: a random token, a
 * constant-time token check, a deadline capped by the maximum lifetime, a copy of the confirmed
 * read digest that the acknowledgement is compared with, a snapshot per end that a sweep returns
 * (an acknowledgement or renewal that ends a lease makes none, as the table shows a listener that
 * keeps nothing a view of its record instead).
 *
 * <p>A deliberate copy, not dead code: {@link TrackedLease} repeats the fields of {@code
 * LeaseTable}'s private live-lease record so that the baselines do the same work per lease with
 * their own storage, and the comparison in BENCHMARKS.md ({@link InsertionOrderedLeaseBook} and
 * {@link FullScanLeaseBook} against {@code LeaseTable}) measures only how expired leases are found.
 * It follows {@code LeaseTable} by hand: a field the table adds to every lease (and pays for)
 * should be added here too, or the baselines look cheaper than they are.
 */
abstract class HashedLeaseBook implements LeaseBook {

  // The read digest every consumer of the benchmark confirms and completes.
  private static final byte[] READ = new byte[32];

  private final Object lock = new Object();
  private final MonotonicClock clock;
  private final long durationNanos;
  private final long maxLifetimeNanos;
  private final Map<String, TrackedLease> live;

  HashedLeaseBook(MonotonicClock clock, LeaseTerms terms, Map<String, TrackedLease> live) {
    this.clock = Objects.requireNonNull(clock, "clock");
    this.durationNanos = terms.duration().toNanos();
    this.maxLifetimeNanos = terms.maxLifetime().toNanos();
    this.live = live;
  }

  @Override
  public Lease grant(String requestId, List<Integer> blockIds) {
    synchronized (lock) {
      long now = clock.nanoTime();
      TrackedLease lease =
          new TrackedLease(
              requestId,
              LeaseToken.random(),
              List.copyOf(blockIds),
              now,
              now + durationNanos,
              now + maxLifetimeNanos);
      if (live.putIfAbsent(requestId, lease) != null) {
        throw new IllegalStateException("request " + requestId + " already holds a live lease");
      }
      return lease.snapshot();
    }
  }

  @Override
  public boolean confirm(String requestId, String token) {
    synchronized (lock) {
      if (!renew(requestId, token)) {
        return false;
      }
      // What the table keeps per confirming consumer: a copy of the read digest it confirmed.
      TrackedLease lease = live.get(requestId);
      if (lease.confirmedRead == null) {
        lease.confirmedRead = new byte[READ.length];
      }
      System.arraycopy(READ, 0, lease.confirmedRead, 0, READ.length);
      return true;
    }
  }

  @Override
  public boolean acknowledge(String requestId, String token) {
    synchronized (lock) {
      TrackedLease lease = live.get(requestId);
      if (lease == null
          || !lease.token.matches(token)
          || lease.confirmedRead == null
          || !MessageDigest.isEqual(lease.confirmedRead, READ)) {
        return false;
      }
      live.remove(requestId);
      return clock.nanoTime() < lease.deadline;
    }
  }

  @Override
  public boolean renew(String requestId, String token) {
    synchronized (lock) {
      TrackedLease lease = live.get(requestId);
      if (lease == null || !lease.token.matches(token)) {
        return false;
      }
      long now = clock.nanoTime();
      if (now >= lease.deadline) {
        live.remove(requestId);
        return false;
      }
      // In place: the lease keeps its position in the map, whatever the map's order.
      lease.deadline = Math.max(lease.deadline, Math.min(now + durationNanos, lease.maxDeadline));
      return true;
    }
  }

  @Override
  public List<LeaseEnd> expire() {
    synchronized (lock) {
      return sweep(live.values().iterator(), clock.nanoTime());
    }
  }

  @Override
  public int size() {
    synchronized (lock) {
      return live.size();
    }
  }

  /**
   * Removes, through {@code leases}, the expired leases this book's strategy finds, and ends them.
   * Called under the lock.
   */
  abstract List<LeaseEnd> sweep(Iterator<TrackedLease> leases, long now);

  static LeaseEnd end(TrackedLease lease, EndReason reason, long now) {
    return new LeaseEnd(lease.snapshot(), reason, now, "");
  }

  static List<LeaseEnd> endAll(List<TrackedLease> expired, long now) {
    if (expired.isEmpty()) {
      return List.of();
    }
    List<LeaseEnd> ended = new ArrayList<>(expired.size());
    for (TrackedLease lease : expired) {
      ended.add(end(lease, EndReason.EXPIRED, now));
    }
    return ended;
  }

  /** A live lease; mutable deadline, touched only under the book's lock. */
  static final class TrackedLease {
    final String requestId;
    final LeaseToken token;
    final List<Integer> blockIds;
    final long grantedAt;
    final long maxDeadline;
    long deadline;
    byte[] confirmedRead;

    TrackedLease(
        String requestId,
        LeaseToken token,
        List<Integer> blockIds,
        long grantedAt,
        long deadline,
        long maxDeadline) {
      this.requestId = requestId;
      this.token = token;
      this.blockIds = blockIds;
      this.grantedAt = grantedAt;
      this.deadline = deadline;
      this.maxDeadline = maxDeadline;
    }

    Lease snapshot() {
      return new Lease(requestId, token, blockIds, grantedAt, deadline, maxDeadline, 1, 0);
    }
  }
}
