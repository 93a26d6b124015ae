package io.kvbridge.lease;

/**
 * How and when a lease ended; produced exactly once per lease.
 *
 * @param lease the lease as it was when it ended
 * @param reason why it ended
 * @param endedAtNanos when, on P's monotonic clock
 * @param detail a human-readable cause, e.g. the consumer that read it or why it was revoked
 */
public record LeaseEnd(Lease lease, EndReason reason, long endedAtNanos, String detail) {}
