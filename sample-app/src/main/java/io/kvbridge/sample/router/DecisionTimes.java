package io.kvbridge.sample.router;

import java.util.Arrays;
import java.util.function.LongConsumer;

/**
 * How long the router took to choose its nodes for each request: hashing the prompt, asking the
 * prefix index and choosing by load, not the calls to the nodes nor a probe of down nodes. Keeps
 * the last {@value #KEPT} decisions for their percentiles and hands each to a listener (a meter).
 *
 * <p>Thread-safe.
 */
final class DecisionTimes {

  /** How many of the last decisions the percentiles cover. */
  static final int KEPT = 8192;

  private final long[] nanos = new long[KEPT];
  private long count;
  private volatile LongConsumer listener = n -> {};

  /** Records one decision of {@code took} nanoseconds. */
  void record(long took) {
    synchronized (this) {
      nanos[(int) (count % KEPT)] = took;
      count++;
    }
    listener.accept(took);
  }

  /** Hands every decision recorded from now on to {@code meter} too. */
  void listener(LongConsumer meter) {
    this.listener = meter;
  }

  /** The decisions so far and the percentiles of the last {@value #KEPT}. */
  synchronized Summary summary() {
    int n = (int) Math.min(count, KEPT);
    long[] sorted = Arrays.copyOf(nanos, n);
    Arrays.sort(sorted);
    return new Summary(
        count, micros(sorted, 0.5), micros(sorted, 0.99), n == 0 ? 0 : sorted[n - 1] / 1000.0);
  }

  /** The nearest-rank {@code quantile} of {@code sorted}, in microseconds; 0 if none. */
  private static double micros(long[] sorted, double quantile) {
    if (sorted.length == 0) {
      return 0;
    }
    int rank = (int) Math.ceil(quantile * sorted.length);
    return sorted[Math.max(0, rank - 1)] / 1000.0;
  }

  /**
   * Decision times.
   *
   * @param count decisions since start
   * @param p50Micros the median of the last {@value #KEPT}, in microseconds
   * @param p99Micros their 99th percentile (nearest rank), in microseconds
   * @param maxMicros the longest of them, in microseconds
   */
  record Summary(long count, double p50Micros, double p99Micros, double maxMicros) {}
}
