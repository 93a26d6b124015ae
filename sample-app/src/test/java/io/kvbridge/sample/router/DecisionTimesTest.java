package io.kvbridge.sample.router;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class DecisionTimesTest {

  @Test
  void percentilesAreNearestRankOverTheLastDecisionsKeptAndEachGoesToTheListener() {
    DecisionTimes times = new DecisionTimes();
    List<Long> heard = new ArrayList<>();
    times.listener(heard::add);
    assertThat(times.summary()).isEqualTo(new DecisionTimes.Summary(0, 0, 0, 0));

    for (long micros = 1; micros <= 100; micros++) {
      times.record(micros * 1000);
    }

    assertThat(times.summary()).isEqualTo(new DecisionTimes.Summary(100, 50, 99, 100));
    assertThat(heard).hasSize(100).startsWith(1000L).endsWith(100_000L);
  }

  @Test
  void onlyTheLastDecisionsKeptCount() {
    DecisionTimes times = new DecisionTimes();
    times.record(1_000_000_000L);
    for (int i = 0; i < DecisionTimes.KEPT; i++) {
      times.record(2000);
    }

    assertThat(times.summary().count()).isEqualTo(DecisionTimes.KEPT + 1L);
    assertThat(times.summary().maxMicros()).isEqualTo(2);
  }
}
