package io.kvbridge.runtime.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ClockOffsetTest {

  @Test
  void clockOffsetErrsEarly() {
    // The producer's clock runs 1000 ns ahead; the round trip took 200 ns.
    ClockOffset offset = ClockOffset.estimate(10_000, 11_100, 10_200);

    assertThat(offset.offsetNanos()).isEqualTo(1000);
    assertThat(offset.deadlineToLocal(50_000)).isLessThanOrEqualTo(49_000);
  }
}
