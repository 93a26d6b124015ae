package io.kvbridge.benchmarks.routing;

import static org.assertj.core.api.Assertions.assertThat;

import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

class DecisionHistogramTest {

  private static String text(long under10us, long under100us, long under1ms, long all) {
    return "# HELP kvbridge_router_decision_seconds Time the router took\n"
        + "# TYPE kvbridge_router_decision_seconds histogram\n"
        + "kvbridge_router_decision_seconds_bucket{application=\"router\",le=\"1.0E-5\"} "
        + under10us
        + "\n"
        + "kvbridge_router_decision_seconds_bucket{application=\"router\",le=\"1.0E-4\"} "
        + under100us
        + "\n"
        + "kvbridge_router_decision_seconds_bucket{application=\"router\",le=\"0.001\"} "
        + under1ms
        + "\n"
        + "kvbridge_router_decision_seconds_bucket{application=\"router\",le=\"+Inf\"} "
        + all
        + "\n"
        + "kvbridge_router_decision_seconds_count{application=\"router\"} "
        + all
        + "\n"
        + "kvbridge_router_requests_total 7.0\n";
  }

  @Test
  void theDecisionsBetweenTwoReadingsGiveTheirOwnQuantiles() {
    // Before: 100 slow decisions (a fill); after: 1,000 more, 990 of them under 100 us.
    DecisionHistogram before = DecisionHistogram.parse(text(0, 0, 0, 100));
    DecisionHistogram after = DecisionHistogram.parse(text(500, 990, 1000, 1100));

    DecisionHistogram workload = after.since(before);

    assertThat(workload.count()).isEqualTo(1000);
    assertThat(workload.quantileAtMostMicros(0.5)).isEqualTo(10.0, within());
    assertThat(workload.quantileAtMostMicros(0.99)).isEqualTo(100.0, within());
    assertThat(after.quantileAtMostMicros(0.99)).isInfinite();
  }

  @Test
  void aTextWithoutTheHistogramCountsNothing() {
    DecisionHistogram none = DecisionHistogram.parse("kvbridge_router_requests_total 7.0\n");

    assertThat(none.count()).isZero();
    assertThat(none.quantileAtMostMicros(0.99)).isNaN();
  }

  private static Offset<Double> within() {
    return Offset.offset(1e-9);
  }
}
