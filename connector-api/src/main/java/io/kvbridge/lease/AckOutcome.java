package io.kvbridge.lease;

import java.util.Optional;

/** What a consumer's read acknowledgement did to a lease. */
public sealed interface AckOutcome {

  /** The last required acknowledgement arrived in time: the lease ended as READ. */
  record Read(LeaseEnd end) implements AckOutcome {}

  /** Accepted, but more consumers must still acknowledge before the lease ends. */
  record Partial(Lease lease, int remaining) implements AckOutcome {}

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
