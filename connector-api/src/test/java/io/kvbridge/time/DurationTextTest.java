package io.kvbridge.time;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationTextTest {

  @Test
  void durationIsWrittenInTheLargestUnitThatHoldsItExactly() {
    assertThat(DurationText.of(Duration.ofMinutes(2))).isEqualTo("2m");
    assertThat(DurationText.of(Duration.ofSeconds(90))).isEqualTo("90s");
    assertThat(DurationText.of(Duration.ofMillis(250))).isEqualTo("250ms");
    assertThat(DurationText.of(Duration.ofNanos(1_500))).isEqualTo("1500ns");
    assertThat(DurationText.of(Duration.ofDays(3))).isEqualTo("3d");
  }

  @Test
  void zeroAndNegativeDurationsKeepTheirSign() {
    assertThat(DurationText.of(Duration.ZERO)).isEqualTo("0s");
    assertThat(DurationText.of(Duration.ofMinutes(-2))).isEqualTo("-2m");
    assertThat(DurationText.of(Duration.ofMillis(-500))).isEqualTo("-500ms");
  }
}
