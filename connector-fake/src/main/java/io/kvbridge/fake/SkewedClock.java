package io.kvbridge.fake;

import io.kvbridge.time.MonotonicClock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link MonotonicClock} that reads another clock plus an offset, to give P and D clocks that
 * disagree the way two machines' clocks do: {@code new SkewedClock(clock, Duration.ofSeconds(-3))}
 * runs three seconds behind {@code clock}.
 *
 * <p>The offset may be raised while the clock is in use (the clock jumps forward, as after a pause
 * of the machine) but never lowered, which would make a monotonic clock run backwards.
 *
 * <p>Thread-safe.
 */
public final class SkewedClock implements MonotonicClock {

  private final MonotonicClock base;
  private final AtomicLong offsetNanos;

  /** A clock that reads {@code base} plus {@code offset} (which may be negative). */
  public SkewedClock(MonotonicClock base, Duration offset) {
    this.base = Objects.requireNonNull(base, "base");
    this.offsetNanos = new AtomicLong(offset.toNanos());
  }

  @Override
  public long nanoTime() {
    return base.nanoTime() + offsetNanos.get();
  }

  /** How far this clock is ahead of its base (negative: behind). */
  public Duration offset() {
    return Duration.ofNanos(offsetNanos.get());
  }

  /**
   * Moves this clock further ahead of its base.
   *
   * @throws IllegalArgumentException if {@code newOffset} is below the current offset
   */
  public void setOffset(Duration newOffset) {
    long wanted = newOffset.toNanos();
    long current = offsetNanos.get();
    while (wanted >= current) {
      if (offsetNanos.compareAndSet(current, wanted)) {
        return;
      }
      current = offsetNanos.get();
    }
    throw new IllegalArgumentException(
        "the offset may only grow (a monotonic clock cannot go back): it is "
            + Duration.ofNanos(current)
            + ", asked for "
            + newOffset);
  }
}
