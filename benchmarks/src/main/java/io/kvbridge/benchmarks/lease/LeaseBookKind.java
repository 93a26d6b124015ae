package io.kvbridge.benchmarks.lease;

import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.time.MonotonicClock;

/** The lease books the benchmarks compare; the name is the JMH parameter value. */
public enum LeaseBookKind {
  /** kvbridge's {@link io.kvbridge.lease.LeaseTable}: hash index plus a deadline-ordered tree. */
  TABLE {
    @Override
    public LeaseBook create(MonotonicClock clock, LeaseTerms terms) {
      return new LeaseTableBook(clock, terms);
    }
  },
  /** Baseline: insertion order, swept from the head; correct only without renewals. */
  INSERTION_ORDERED {
    @Override
    public LeaseBook create(MonotonicClock clock, LeaseTerms terms) {
      return new InsertionOrderedLeaseBook(clock, terms);
    }
  },
  /** Baseline: a hash map swept by looking at every live lease. */
  FULL_SCAN {
    @Override
    public LeaseBook create(MonotonicClock clock, LeaseTerms terms) {
      return new FullScanLeaseBook(clock, terms);
    }
  };

  /** Creates an empty book of this kind over {@code clock}. */
  public abstract LeaseBook create(MonotonicClock clock, LeaseTerms terms);
}
