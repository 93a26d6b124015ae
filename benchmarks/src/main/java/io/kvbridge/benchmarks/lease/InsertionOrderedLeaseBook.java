package io.kvbridge.benchmarks.lease;

import io.kvbridge.lease.LeaseEnd;
import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.time.MonotonicClock;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * Baseline: leases in grant order ({@link LinkedHashMap}), swept from the oldest until the first
 * lease that has not expired — O(expired + 1) per sweep. This is how vLLM's producer side tracks
 * the requests it holds blocks for (an insertion-ordered dict of request id to expiry, scanned
 * until the first unexpired entry).
 *
 * <p><b>Correct only while deadlines follow grant order.</b> A renewal moves a deadline later
 * without moving the lease in the map, so a renewed lease at the head hides expired leases behind
 * it until it expires itself. The benchmarks that use it renew nothing before sweeping.
 */
public final class InsertionOrderedLeaseBook extends HashedLeaseBook {

  /** Creates an empty book. */
  public InsertionOrderedLeaseBook(MonotonicClock clock, LeaseTerms terms) {
    super(clock, terms, new LinkedHashMap<>());
  }

  @Override
  List<LeaseEnd> sweep(Iterator<TrackedLease> leases, long now) {
    List<TrackedLease> expired = new ArrayList<>();
    while (leases.hasNext()) {
      TrackedLease lease = leases.next();
      if (lease.deadline > now) {
        break;
      }
      leases.remove();
      expired.add(lease);
    }
    return endAll(expired, now);
  }
}
