package io.kvbridge.sample.router;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Fault injection in the router: decides which requests are dropped after prefill, so that the
 * prefill node's lease is never read and must expire. Exactly {@code share} of the eligible
 * requests are dropped, spread evenly (with share 0.1: the 10th, 20th, ...), so a demo run's count
 * is predictable.
 *
 * <p>Thread-safe.
 */
public final class DropAfterPrefill {

  private final double share;
  private final AtomicLong eligible = new AtomicLong();

  /** Drops {@code share} (0 to 1) of the requests it is asked about. */
  public DropAfterPrefill(double share) {
    if (!(share >= 0 && share <= 1)) {
      throw new IllegalArgumentException("drop share must be between 0 and 1, got " + share);
    }
    this.share = share;
  }

  /** The configured share. */
  public double share() {
    return share;
  }

  /** Whether to drop the next eligible request. */
  public boolean dropNext() {
    long n = eligible.incrementAndGet();
    return Math.floor(n * share) > Math.floor((n - 1) * share);
  }
}
