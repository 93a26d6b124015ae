package io.kvbridge.lease;

/**
 * What a heartbeat did to a lease. A renewal's outcome carries the new deadline only (the {@link
 * LeaseListener} sees the renewed lease), so a caller that does not keep the outcome costs the
 * table no allocation.
 */
public sealed interface RenewOutcome {

  /**
   * The lease is live; its deadline is now {@code deadlineNanos} on P's clock (never earlier than
   * before).
   */
  record Renewed(long deadlineNanos) implements RenewOutcome {}

  /** Ignored: nothing changed. */
  record Ignored(Rejection reason) implements RenewOutcome {}
}
