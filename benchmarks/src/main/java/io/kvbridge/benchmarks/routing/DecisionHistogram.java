package io.kvbridge.benchmarks.routing;

import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The router's decision-time histogram ({@code kvbridge.router.decision}) as its Prometheus text
 * gives it: cumulative counts per upper bound. Two readings apart give the decisions made between
 * them, so the workload's decisions are told from those of the fill before it.
 */
final class DecisionHistogram {

  private static final Pattern BUCKET =
      Pattern.compile(
          "^kvbridge_router_decision_seconds_bucket\\{[^}]*le=\"([^\"]+)\"[^}]*}\\s+(\\S+)",
          Pattern.MULTILINE);

  // Cumulative count per upper bound in seconds; +Inf last.
  private final TreeMap<Double, Long> cumulative;

  private DecisionHistogram(TreeMap<Double, Long> cumulative) {
    this.cumulative = cumulative;
  }

  /** The histogram in {@code prometheusText}; empty if it has none. */
  static DecisionHistogram parse(String prometheusText) {
    TreeMap<Double, Long> buckets = new TreeMap<>();
    Matcher m = BUCKET.matcher(prometheusText);
    while (m.find()) {
      double le =
          m.group(1).equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(m.group(1));
      buckets.merge(le, (long) Double.parseDouble(m.group(2)), Long::sum);
    }
    return new DecisionHistogram(buckets);
  }

  /** The decisions counted in this reading and not in {@code earlier}. */
  DecisionHistogram since(DecisionHistogram earlier) {
    TreeMap<Double, Long> delta = new TreeMap<>();
    cumulative.forEach((le, n) -> delta.put(le, n - earlier.cumulative.getOrDefault(le, 0L)));
    return new DecisionHistogram(delta);
  }

  /** How many decisions the histogram counts. */
  long count() {
    return cumulative.isEmpty() ? 0 : cumulative.lastEntry().getValue();
  }

  /**
   * The upper bound, in microseconds, of the bucket that holds the nearest-rank {@code quantile}:
   * the quantile is at most this. {@code NaN} if nothing was counted; infinite beyond the last
   * finite bound.
   */
  double quantileAtMostMicros(double quantile) {
    long n = count();
    if (n == 0) {
      return Double.NaN;
    }
    long rank = (long) Math.ceil(quantile * n);
    for (Map.Entry<Double, Long> bucket : cumulative.entrySet()) {
      if (bucket.getValue() >= rank) {
        return bucket.getKey() * 1e6;
      }
    }
    return Double.POSITIVE_INFINITY;
  }
}
