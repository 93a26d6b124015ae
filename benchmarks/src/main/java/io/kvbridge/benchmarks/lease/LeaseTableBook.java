package io.kvbridge.benchmarks.lease;

import io.kvbridge.lease.Lease;
import io.kvbridge.lease.LeaseEnd;
import io.kvbridge.lease.LeaseListener;
import io.kvbridge.lease.LeaseTable;
import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.lease.RenewOutcome;
import io.kvbridge.time.MonotonicClock;
import java.util.List;

/** {@link LeaseTable} seen as a {@link LeaseBook}: one consumer, one acknowledgement per lease. */
public final class LeaseTableBook implements LeaseBook {

  private static final String CONSUMER = "decode-0";

  /** Every lease of the benchmark binds the same read digest; its check costs the same. */
  private static final byte[] READ_DIGEST = new byte[32];

  private final LeaseTable table;

  /** Creates an empty table with no listener. */
  public LeaseTableBook(MonotonicClock clock, LeaseTerms terms) {
    this.table = new LeaseTable(clock, terms, LeaseListener.NONE);
  }

  @Override
  public Lease grant(String requestId, List<Integer> blockIds) {
    return table.grant(requestId, blockIds, 1, READ_DIGEST);
  }

  @Override
  public boolean acknowledge(String requestId, String token) {
    return table.acknowledge(requestId, token, CONSUMER, READ_DIGEST).accepted();
  }

  @Override
  public boolean renew(String requestId, String token) {
    return table.renew(requestId, token) instanceof RenewOutcome.Renewed;
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
