package io.kvbridge.lease;

/**
 * How and when a lease ended, as a {@link LeaseListener} sees it during one call: the same facts as
 * a {@link LeaseEnd}, without making one.
 *
 * <p><b>Valid only during the call.</b> The table shows every end through the same view, so a view,
 * and the {@link #lease()} view in it, is valid only until the listener call that received it
 * returns; after that every accessor throws {@link IllegalStateException}. A listener that keeps
 * what it sees keeps the values it read, or {@link #snapshot()}.
 *
 * <p>Threads: read it only on the thread the listener was called on, during the call.
 */
public final class LeaseEndView {

  private final LeaseView lease = new LeaseView();
  private EndReason reason;
  private long endedAtNanos;
  private String detail;

  LeaseEndView() {}

  /**
   * Shows an end until {@link #close()}; returns the lease view, which the caller opens on the
   * ended lease's facts.
   */
  LeaseView open(EndReason reason, long endedAtNanos, String detail) {
    this.reason = reason;
    this.endedAtNanos = endedAtNanos;
    this.detail = detail;
    return lease;
  }

  /** Ends the call: the view shows nothing until it is opened again. */
  void close() {
    lease.close();
    reason = null;
    detail = null;
  }

  /** The lease as it was when it ended. */
  public LeaseView lease() {
    lease.checkOpen();
    return lease;
  }

  /** Why it ended. */
  public EndReason reason() {
    lease.checkOpen();
    return reason;
  }

  /** When, on P's monotonic clock. */
  public long endedAtNanos() {
    lease.checkOpen();
    return endedAtNanos;
  }

  /** A human-readable cause, e.g. the consumer that read it or why it was revoked. */
  public String detail() {
    lease.checkOpen();
    return detail;
  }

  /** An immutable copy of what the view shows, to keep beyond the call. */
  public LeaseEnd snapshot() {
    return new LeaseEnd(lease.snapshot(), reason, endedAtNanos, detail);
  }

  @Override
  public String toString() {
    return lease.isOpen() ? "LeaseEndView[" + snapshot() + "]" : "LeaseEndView[closed]";
  }
}
