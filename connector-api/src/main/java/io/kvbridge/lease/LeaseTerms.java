package io.kvbridge.lease;

import io.kvbridge.lease.InvalidLeaseTermsException.Term;
import io.kvbridge.time.DurationText;
import java.time.Duration;
import java.util.Objects;

/**
 * How long leases last.
 *
 * @param duration how long a lease lives after it is granted, and how far a renewal extends it from
 *     the moment of renewal; positive
 * @param maxLifetime the hard limit from grant that no renewal may pass; at least {@code duration}
 */
public record LeaseTerms(Duration duration, Duration maxLifetime) {

  /**
   * Rejects non-positive durations and a lifetime shorter than one lease.
   *
   * @throws InvalidLeaseTermsException naming the wrong term
   */
  public LeaseTerms {
    Objects.requireNonNull(duration, "duration");
    Objects.requireNonNull(maxLifetime, "maxLifetime");
    requirePositive(Term.DURATION, duration);
    requirePositive(Term.MAX_LIFETIME, maxLifetime);
    if (maxLifetime.compareTo(duration) < 0) {
      throw new InvalidLeaseTermsException(
          Term.MAX_LIFETIME,
          "("
              + DurationText.of(maxLifetime)
              + ") must be at least the lease duration ("
              + DurationText.of(duration)
              + ")");
    }
  }

  private static void requirePositive(Term term, Duration value) {
    if (value.isNegative() || value.isZero()) {
      throw new InvalidLeaseTermsException(
          term, "(" + DurationText.of(value) + ") must be positive, e.g. 5s or 500ms");
    }
  }
}
