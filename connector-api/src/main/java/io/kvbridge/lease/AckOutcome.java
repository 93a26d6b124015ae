package io.kvbridge.lease;

import java.util.Optional;

/**
 * What a consumer's read acknowledgement did to a lease. An accepted acknowledgement's outcome is
 * one the table made once: the lease's end, with when it ended, goes to the table's {@link
 * LeaseListener}, so an acknowledgement allocates nothing.
 */
public sealed interface AckOutcome {

  /**
   * The last required acknowledgement arrived in time: the lease ended as READ. When, and the rest
   * of the end, the table's listener learns ({@link LeaseListener#ended(LeaseEndView)}). All
   * instances are equal.
   */
  record Read() implements AckOutcome {}

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
