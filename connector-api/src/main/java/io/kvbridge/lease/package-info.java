/**
 * P's books of leases: a {@link io.kvbridge.lease.LeaseTable} grants a lease on a finished
 * prefill's blocks, renews it on the consumer's heartbeats and confirmations, and ends it exactly
 * once, for one {@link io.kvbridge.lease.EndReason} (read, expired, revoked or released), telling
 * its {@link io.kvbridge.lease.LeaseListener} so the engine may reuse the blocks then and only
 * then.
 *
 * <p>Expiry costs O(log n) per lease event and O(expired) per sweep ({@link
 * io.kvbridge.lease.DeadlineHeap}); time is injected through {@link
 * io.kvbridge.time.MonotonicClock}. Outcomes are sealed types ({@link
 * io.kvbridge.lease.RenewOutcome}, {@link io.kvbridge.lease.AckOutcome}, {@link
 * io.kvbridge.lease.ReleaseOutcome}), so a caller handles every way a message can fail.
 */
package io.kvbridge.lease;
