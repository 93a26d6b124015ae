package io.kvbridge.lease;

/**
 * The coding of {@link RenewOutcome}s in a {@code long}: a renewal is its deadline, a refusal the
 * code {@code Long.MIN_VALUE + reason.ordinal()}. The lease table keeps every deadline at or above
 * {@link #FIRST_DEADLINE}, so that no deadline reads as a refusal.
 *
 * <p>Threads: stateless.
 */
final class RenewCodes {

  private static final Rejection[] REJECTIONS = Rejection.values();

  /** The earliest deadline a lease may have: the first value above the refusal codes. */
  static final long FIRST_DEADLINE = Long.MIN_VALUE + REJECTIONS.length;

  // The outcomes that carry nothing but a rejection, made once.
  private static final RenewOutcome.Ignored[] IGNORED = new RenewOutcome.Ignored[REJECTIONS.length];

  static {
    for (Rejection reason : REJECTIONS) {
      IGNORED[reason.ordinal()] = new RenewOutcome.Ignored(reason);
    }
  }

  private RenewCodes() {}

  /** The code of a renewal refused for {@code reason}. */
  static long code(Rejection reason) {
    return Long.MIN_VALUE + reason.ordinal();
  }

  static boolean isRenewed(long code) {
    return code >= FIRST_DEADLINE;
  }

  static Rejection rejection(long code) {
    if (isRenewed(code)) {
      throw new IllegalArgumentException(
          "renewal code " + code + " is a renewal's deadline, not a refusal");
    }
    return REJECTIONS[(int) (code - Long.MIN_VALUE)];
  }

  /** The shared outcome of a renewal refused for {@code reason}. */
  static RenewOutcome.Ignored ignored(Rejection reason) {
    return IGNORED[reason.ordinal()];
  }

  static RenewOutcome outcome(long code) {
    return isRenewed(code) ? new RenewOutcome.Renewed(code) : ignored(rejection(code));
  }
}
