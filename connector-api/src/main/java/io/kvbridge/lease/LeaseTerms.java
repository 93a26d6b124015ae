package io.kvbridge.lease;

import java.time.Duration;
import java.util.Objects;

/**
 * How long leases last.
 *
 * @param duration how long a lease lives after it is granted, and how far a renewal extends it from
 *     the moment of renewal
 * @param maxLifetime the hard limit from grant that no renewal may pass; at least {@code duration}
 */
public record LeaseTerms(Duration duration, Duration maxLifetime) {

  /** Rejects non-positive durations and a lifetime shorter than one lease. */
  public LeaseTerms {
    Objects.requireNonNull(duration, "duration");
    Objects.requireNonNull(maxLifetime, "maxLifetime");
    if (duration.isNegative() || duration.isZero()) {
      throw new IllegalArgumentException("lease duration must be positive, got " + duration);
    }
    if (maxLifetime.compareTo(duration) < 0) {
      throw new IllegalArgumentException(
          "lease max lifetime ("
              + maxLifetime
              + ") must be at least the duration ("
              + duration
              + ")");
    }
  }
}
