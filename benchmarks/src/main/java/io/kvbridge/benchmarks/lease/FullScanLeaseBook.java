package io.kvbridge.benchmarks.lease;

import io.kvbridge.lease.LeaseEnd;
import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.time.MonotonicClock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;

/**
 * Baseline: leases in a {@link HashMap}, swept by looking at every live lease — O(n) per sweep,
 * expired or not. Correct with renewals in any order; what an insertion-ordered sweep must become
 * once renewals reorder deadlines, short of keeping a deadline index.
 */
public final class FullScanLeaseBook extends HashedLeaseBook {

  /** Creates an empty book. */
  public FullScanLeaseBook(MonotonicClock clock, LeaseTerms terms) {
    super(clock, terms, new HashMap<>());
  }

  @Override
  List<LeaseEnd> sweep(Iterator<TrackedLease> leases, long now) {
    List<TrackedLease> expired = new ArrayList<>();
    while (leases.hasNext()) {
      TrackedLease lease = leases.next();
      if (lease.deadline <= now) {
        leases.remove();
        expired.add(lease);
      }
    }
    return endAll(expired, now);
  }
}
