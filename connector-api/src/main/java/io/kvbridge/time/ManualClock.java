package io.kvbridge.time;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A clock that moves only when told to: tests and simulations advance it explicitly instead of
 * sleeping, so expiry is exercised deterministically.
 *
 * <p>Thread-safe: reads and advances are atomic.
 */
public final class ManualClock implements MonotonicClock {

  private final AtomicLong now;

  /** Creates a clock that starts at {@code startNanos}. */
  public ManualClock(long startNanos) {
    this.now = new AtomicLong(startNanos);
  }

  /** Creates a clock that starts at an arbitrary non-zero origin, as real monotonic clocks do. */
  public ManualClock() {
    this(1_000_000_000L);
  }

  @Override
  public long nanoTime() {
    return now.get();
  }

  /** Moves the clock forward by {@code step}; a negative step is refused. */
  public void advance(Duration step) {
    if (step.isNegative()) {
      throw new IllegalArgumentException("a monotonic clock cannot go back: " + step);
    }
    now.addAndGet(step.toNanos());
  }
}
