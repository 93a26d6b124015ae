package io.kvbridge.lease;

import java.util.List;

/**
 * An immutable snapshot of a live lease: P's promise to keep {@code blockIds} for the consumer
 * until {@code deadlineNanos} on P's monotonic clock.
 *
 * @param requestId the engine's request id on P
 * @param token the secret the consumer must present to acknowledge or renew
 * @param blockIds the blocks P holds for the consumer, in transfer order
 * @param grantedAtNanos when the lease was granted
 * @param deadlineNanos when the lease expires unless renewed or read
 * @param maxDeadlineNanos the hard limit no renewal may pass
 * @param acksRequired how many distinct consumers must acknowledge before the lease ends as READ
 * @param acksReceived how many have acknowledged so far
 */
public record Lease(
    String requestId,
    LeaseToken token,
    List<Integer> blockIds,
    long grantedAtNanos,
    long deadlineNanos,
    long maxDeadlineNanos,
    int acksRequired,
    int acksReceived) {

  /** Copies the block list so the snapshot cannot change under its reader. */
  public Lease {
    blockIds = BlockList.of(blockIds);
  }
}
