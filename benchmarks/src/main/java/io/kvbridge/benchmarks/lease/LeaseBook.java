package io.kvbridge.benchmarks.lease;

import io.kvbridge.lease.Lease;
import io.kvbridge.lease.LeaseEnd;
import java.util.List;

/**
 * The lease bookkeeping a producer does, reduced to what the benchmarks compare: grant, read
 * acknowledgement, heartbeat renewal and the expiry sweep. Every implementation does the same work
 * per lease (a random token, a constant-time token check, a deadline capped by the maximum
 * lifetime, a {@link LeaseEnd} per ended lease); they differ only in how they find expired leases.
 *
 * <p>Threads: implementations are safe for use from any thread (each serialises on one lock), as
 * {@link io.kvbridge.lease.LeaseTable} is.
 */
public interface LeaseBook {

  /** Grants a lease on {@code blockIds} to {@code requestId}, one lease duration from now. */
  Lease grant(String requestId, List<Integer> blockIds);

  /**
   * Confirms the lease of {@code requestId} before its consumer reads it: renews it as {@link
   * #renew} does and remembers the read the consumer confirmed, which its acknowledgement must
   * match.
   *
   * @return whether the lease is still live
   */
  boolean confirm(String requestId, String token);

  /**
   * Ends the lease of {@code requestId} as READ if {@code token} matches, the read was confirmed
   * and the lease is still live.
   *
   * @return whether the consumer may use what it read
   */
  boolean acknowledge(String requestId, String token);

  /**
   * Extends the lease of {@code requestId} to one duration from now, never past its maximum
   * lifetime.
   *
   * @return whether the lease is still live
   */
  boolean renew(String requestId, String token);

  /** Ends every lease whose deadline has passed, as far as this book can find them. */
  List<LeaseEnd> expire();

  /** The number of live leases. */
  int size();
}
