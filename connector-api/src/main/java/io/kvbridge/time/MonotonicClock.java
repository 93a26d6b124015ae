package io.kvbridge.time;

/**
 * A source of monotonic time in nanoseconds, injected wherever kvbridge needs "now".
 *
 * <p>Values are only meaningful relative to other values of the same clock: they never go backwards
 * and have an arbitrary origin. Deadlines that cross a process boundary are converted with a
 * measured offset (see {@code io.kvbridge.runtime.consumer.ClockOffset}), never compared raw.
 *
 * <p>Implementations must be safe to call from any thread.
 */
@FunctionalInterface
public interface MonotonicClock {

  /** The system's monotonic clock ({@link System#nanoTime()}). */
  MonotonicClock SYSTEM = System::nanoTime;

  /** Returns the current time in nanoseconds on this clock. */
  long nanoTime();
}
