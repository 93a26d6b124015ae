package io.kvbridge.lease;

/** What a heartbeat did to a lease. */
public sealed interface RenewOutcome {

  /** The lease is live; its deadline is now {@code lease.deadlineNanos()} (never earlier). */
  record Renewed(Lease lease) implements RenewOutcome {}

  /** Ignored: nothing changed. */
  record Ignored(Rejection reason) implements RenewOutcome {}
}
