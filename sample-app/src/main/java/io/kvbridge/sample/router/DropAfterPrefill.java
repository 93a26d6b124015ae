package io.kvbridge.sample.router;

/**
 * Fault injection in the router: decides which requests are dropped after prefill, so that the
 * prefill node's lease is never read and must expire. While armed with a share, exactly that share
 * of the eligible requests is dropped, spread evenly (with 0.1: the 10th, 20th, ... since arming),
 * so a demo run's count is predictable.
 *
 * <p>Thread-safe.
 */
public final class DropAfterPrefill {

  private State state;

  /** Starts armed with {@code share} (0 to 1; 0 drops nothing). */
  public DropAfterPrefill(double share) {
    this.state = new State(checked(share), 0);
  }

  /** The share dropped now. */
  public synchronized double share() {
    return state.share;
  }

  /** Drops {@code share} (0 to 1) of the requests from now on, counting afresh. */
  public synchronized void arm(double share) {
    state = new State(checked(share), 0);
  }

  /** Whether to drop the next eligible request. */
  public synchronized boolean dropNext() {
    long n = state.eligible + 1;
    state = new State(state.share, n);
    return Math.floor(n * state.share) > Math.floor((n - 1) * state.share);
  }

  private static double checked(double share) {
    if (!(share >= 0 && share <= 1)) {
      throw new IllegalArgumentException(
          "the share of requests dropped after prefill must be between 0 and 1, got " + share);
    }
    return share;
  }

  private record State(double share, long eligible) {}
}
