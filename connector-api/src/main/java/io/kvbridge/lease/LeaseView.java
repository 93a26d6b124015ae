package io.kvbridge.lease;

import java.util.List;

/**
 * A live lease as a {@link LeaseListener} sees it during one call, read from the table's own
 * record: the same facts as a {@link Lease} snapshot, without making one.
 *
 * <p><b>Valid only during the call.</b> The table shows every lease through the same view, so a
 * view is valid only until the listener call that received it returns; after that every accessor
 * throws {@link IllegalStateException}. A listener that keeps what it sees keeps the values it
 * read, or {@link #snapshot()}.
 *
 * <p>Threads: read it only on the thread the listener was called on, during the call.
 */
public final class LeaseView {

  private String requestId;
  private LeaseToken token;
  private List<Integer> blockIds;
  private long grantedAtNanos;
  private long deadlineNanos;
  private long maxDeadlineNanos;
  private int acksRequired;
  private int acksReceived;
  private boolean open;

  LeaseView() {}

  /** Shows a lease until {@link #close()}; {@code blockIds} must be immutable. */
  void open(
      String requestId,
      LeaseToken token,
      List<Integer> blockIds,
      long grantedAtNanos,
      long deadlineNanos,
      long maxDeadlineNanos,
      int acksRequired,
      int acksReceived) {
    this.requestId = requestId;
    this.token = token;
    this.blockIds = blockIds;
    this.grantedAtNanos = grantedAtNanos;
    this.deadlineNanos = deadlineNanos;
    this.maxDeadlineNanos = maxDeadlineNanos;
    this.acksRequired = acksRequired;
    this.acksReceived = acksReceived;
    this.open = true;
  }

  /** Ends the call: the view shows nothing until it is opened again. */
  void close() {
    open = false;
    requestId = null;
    token = null;
    blockIds = null;
  }

  /** The engine's request id on P. */
  public String requestId() {
    checkOpen();
    return requestId;
  }

  /** The secret the consumer must present to acknowledge or renew. */
  public LeaseToken token() {
    checkOpen();
    return token;
  }

  /** The blocks P holds for the consumer, in transfer order; unmodifiable, and safe to keep. */
  public List<Integer> blockIds() {
    checkOpen();
    return blockIds;
  }

  /** When the lease was granted. */
  public long grantedAtNanos() {
    checkOpen();
    return grantedAtNanos;
  }

  /** When the lease expires unless renewed or read. */
  public long deadlineNanos() {
    checkOpen();
    return deadlineNanos;
  }

  /** The hard limit no renewal may pass. */
  public long maxDeadlineNanos() {
    checkOpen();
    return maxDeadlineNanos;
  }

  /** How many distinct consumers must acknowledge before the lease ends as READ. */
  public int acksRequired() {
    checkOpen();
    return acksRequired;
  }

  /** How many have acknowledged so far. */
  public int acksReceived() {
    checkOpen();
    return acksReceived;
  }

  /** An immutable copy of what the view shows, to keep beyond the call. */
  public Lease snapshot() {
    checkOpen();
    return new Lease(
        requestId,
        token,
        blockIds,
        grantedAtNanos,
        deadlineNanos,
        maxDeadlineNanos,
        acksRequired,
        acksReceived);
  }

  @Override
  public String toString() {
    return open ? "LeaseView[" + snapshot() + "]" : "LeaseView[closed]";
  }

  boolean isOpen() {
    return open;
  }

  void checkOpen() {
    if (!open) {
      throw new IllegalStateException(
          "a lease view is valid only during the listener call that received it; keep its"
              + " snapshot() or the values read from it instead");
    }
  }
}
