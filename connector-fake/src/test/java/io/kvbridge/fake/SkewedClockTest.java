package io.kvbridge.fake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.time.ManualClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class SkewedClockTest {

  private final ManualClock base = new ManualClock(1_000_000_000L);

  @Test
  void readsTheBaseClockPlusTheOffset() {
    SkewedClock ahead = new SkewedClock(base, Duration.ofMillis(250));

    assertThat(ahead.nanoTime()).isEqualTo(1_250_000_000L);
  }

  @Test
  void negativeOffsetRunsBehindTheBase() {
    SkewedClock behind = new SkewedClock(base, Duration.ofMillis(-300));

    assertThat(behind.nanoTime()).isEqualTo(700_000_000L);
  }

  @Test
  void followsTheBaseClockAsItAdvances() {
    SkewedClock skewed = new SkewedClock(base, Duration.ofSeconds(3));

    base.advance(Duration.ofSeconds(2));

    assertThat(skewed.nanoTime()).isEqualTo(base.nanoTime() + 3_000_000_000L);
  }

  @Test
  void raisingTheOffsetMakesTheClockJumpForward() {
    SkewedClock skewed = new SkewedClock(base, Duration.ZERO);

    skewed.setOffset(Duration.ofSeconds(5));

    assertThat(skewed.nanoTime()).isEqualTo(6_000_000_000L);
    assertThat(skewed.offset()).isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void loweringTheOffsetIsRefusedBecauseTheClockWouldRunBackwards() {
    SkewedClock skewed = new SkewedClock(base, Duration.ofSeconds(5));

    assertThatThrownBy(() -> skewed.setOffset(Duration.ofSeconds(4)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("may only grow");
    assertThat(skewed.offset()).isEqualTo(Duration.ofSeconds(5));
  }
}
