package io.kvbridge.time;

import java.time.Duration;

/**
 * Writes durations the way they are configured ({@code 30s}, {@code 2m}, {@code 250ms}), so a
 * message about a setting shows its value in the form the user wrote it.
 *
 * <p>Stateless; safe for use from any thread.
 */
public final class DurationText {

  private DurationText() {}

  /** The largest unit that expresses {@code duration} exactly, e.g. {@code 90s} or {@code 2m}. */
  public static String of(Duration duration) {
    if (duration.isZero()) {
      return "0s";
    }
    long nanos;
    try {
      nanos = duration.toNanos();
    } catch (ArithmeticException tooLong) {
      return duration.toDays() + "d";
    }
    long[] perUnit = {86_400_000_000_000L, 3_600_000_000_000L, 60_000_000_000L, 1_000_000_000L};
    String[] unit = {"d", "h", "m", "s"};
    for (int i = 0; i < perUnit.length; i++) {
      if (nanos % perUnit[i] == 0) {
        return nanos / perUnit[i] + unit[i];
      }
    }
    if (nanos % 1_000_000L == 0) {
      return nanos / 1_000_000L + "ms";
    }
    if (nanos % 1_000L == 0) {
      return nanos / 1_000L + "us";
    }
    return nanos + "ns";
  }
}
