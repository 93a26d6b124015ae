package io.kvbridge.lease;

import java.util.Optional;

/**
 * What a consumer's read acknowledgement did to a lease. An accepted acknowledgement's outcome
 * carries numbers only: the lease's end, with its snapshot, goes to the table's {@link
 * LeaseListener}, so a caller that does not keep the outcome costs the table no allocation.
 */
public sealed interface AckOutcome {

  /**
   * The last required acknowledgement arrived in time: the lease ended as READ.
   *
   * @param endedAtNanos when, on P's clock
   */
  record Read(long endedAtNanos) implements AckOutcome {}

  /**
   * Accepted, but more consumers must still acknowledge before the lease ends.
   *
   * @param remaining how many distinct consumers still must
   */
  record Partial(int remaining) implements AckOutcome {}

  /**
   * Refused: the read cannot be trusted and the consumer must not use what it read. For {@link
   * Rejection#EXPIRED} the lease ended as EXPIRED in the same call ({@code expiredNow}).
   */
  record Refused(Rejection reason, Optional<LeaseEnd> expiredNow) implements AckOutcome {}

  /** Whether the consumer may use the bytes it read. */
  default boolean accepted() {
    return !(this instanceof Refused);
  }
}
