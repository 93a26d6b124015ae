package io.kvbridge.sample.router;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class DropAfterPrefillTest {

  @Test
  void dropsExactlyTheShareSpreadEvenly() {
    DropAfterPrefill drops = new DropAfterPrefill(0.1);

    boolean[] dropped = new boolean[100];
    IntStream.range(0, 100).forEach(i -> dropped[i] = drops.dropNext());

    assertThat(IntStream.range(0, 100).filter(i -> dropped[i]))
        .containsExactly(9, 19, 29, 39, 49, 59, 69, 79, 89, 99);
  }

  @Test
  void aShareOfZeroDropsNothing() {
    DropAfterPrefill drops = new DropAfterPrefill(0);

    assertThat(IntStream.range(0, 1000).filter(i -> drops.dropNext())).isEmpty();
  }

  @Test
  void armingCountsAfresh() {
    DropAfterPrefill drops = new DropAfterPrefill(0.5);
    drops.dropNext();

    drops.arm(0.5);

    assertThat(drops.dropNext()).isFalse();
    assertThat(drops.dropNext()).isTrue();
  }

  @Test
  void aShareOutsideZeroToOneIsRefused() {
    assertThatThrownBy(() -> new DropAfterPrefill(1.5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("between 0 and 1");
  }
}
