package io.kvbridge.benchmarks.lease;

import io.kvbridge.lease.Lease;
import io.kvbridge.lease.LeaseEnd;
import io.kvbridge.lease.LeaseListener;
import io.kvbridge.lease.LeaseTable;
import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.lease.ReadClaim;
import io.kvbridge.lease.RenewOutcome;
import io.kvbridge.time.MonotonicClock;
import java.util.Arrays;
import java.util.List;

/** {@link LeaseTable} seen as a {@link LeaseBook}: one consumer, one acknowledgement per lease. */
public final class LeaseTableBook implements LeaseBook {

  private static final String CONSUMER = "decode-0";

  /** Every lease of the benchmark binds the same read digest; its check costs the same. */
  private static final byte[] BINDING = new byte[32];

  // What the consumer claims it read: the lease's own binding (one allocation, reused).
  private static final ReadClaim READ =
      new ReadClaim(CONSUMER, BINDING, 0, granted -> Arrays.equals(granted, BINDING));

  private final LeaseTable table;

  /** Creates an empty table with no listener. */
  public LeaseTableBook(MonotonicClock clock, LeaseTerms terms) {
    this.table = new LeaseTable(clock, terms, LeaseListener.NONE);
  }

  @Override
  public Lease grant(String requestId, List<Integer> blockIds) {
    return table.grant(requestId, blockIds, 1, BINDING);
  }

  @Override
  public boolean confirm(String requestId, String token) {
    return table.confirm(requestId, token, READ) instanceof RenewOutcome.Renewed;
  }

  @Override
  public boolean acknowledge(String requestId, String token) {
    return table.acknowledge(requestId, token, READ).accepted();
  }

  @Override
  public boolean renew(String requestId, String token) {
    return RenewOutcome.isRenewed(table.renewDeadline(requestId, token));
  }

  @Override
  public List<LeaseEnd> expire() {
    return table.expire();
  }

  @Override
  public int size() {
    return table.size();
  }
}
