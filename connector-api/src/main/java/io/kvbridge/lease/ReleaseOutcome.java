package io.kvbridge.lease;

/** What a consumer's release did to a lease. */
public sealed interface ReleaseOutcome {

  /** The lease ended as {@link EndReason#RELEASED}. */
  record Released(LeaseEnd end) implements ReleaseOutcome {}

  /** Nothing ended. */
  record Refused(Rejection reason) implements ReleaseOutcome {}
}
