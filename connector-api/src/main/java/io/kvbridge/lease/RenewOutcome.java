package io.kvbridge.lease;

/**
 * What a heartbeat did to a lease. A renewal's outcome carries the new deadline only (the {@link
 * LeaseListener} sees the renewed lease).
 *
 * <p><b>Coded outcomes.</b> {@link LeaseTable#renewDeadline} reports the same outcome as one {@code
 * long}, so that a renewal allocates nothing: the new deadline when the lease was renewed, else a
 * code reserved for the {@link Rejection}, a value no deadline of the table takes. {@link
 * #isRenewed(long)}, {@link #rejection(long)} and {@link #of(long)} read a code. A code means
 * something only in the process that made it: what crosses the wire is the deadline.
 */
public sealed interface RenewOutcome {

  /**
   * The lease is live; its deadline is now {@code deadlineNanos} on P's clock (never earlier than
   * before).
   */
  record Renewed(long deadlineNanos) implements RenewOutcome {}

  /** Ignored: nothing changed. */
  record Ignored(Rejection reason) implements RenewOutcome {}

  /** Whether a coded outcome is a renewal: then the code is the lease's new deadline. */
  static boolean isRenewed(long code) {
    return RenewCodes.isRenewed(code);
  }

  /**
   * Why a coded outcome was ignored.
   *
   * @throws IllegalArgumentException if the code is a renewal's deadline
   */
  static Rejection rejection(long code) {
    return RenewCodes.rejection(code);
  }

  /**
   * The outcome a code stands for: {@link Renewed} with the code as deadline, or {@link Ignored}.
   */
  static RenewOutcome of(long code) {
    return RenewCodes.outcome(code);
  }
}
