package io.kvbridge.benchmarks.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class PeerGroupTest {

  @ParameterizedTest
  @EnumSource(PeerGroup.Direction.class)
  void everyReadOfARequestReproducesItsSource(PeerGroup.Direction direction) {
    try (PeerGroup group = PeerGroup.overFake(ReadShape.parse("4KiBx3"), 3, direction)) {
      assertThat(group.everyTargetHoldsItsSource()).isFalse();

      group.readAll();

      assertThat(group.everyTargetHoldsItsSource()).isTrue();
    }
  }

  @ParameterizedTest
  @EnumSource(PeerGroup.Direction.class)
  void aRequestMovesOneShapePerPeer(PeerGroup.Direction direction) {
    try (PeerGroup group = PeerGroup.overFake(ReadShape.parse("4KiBx3"), 4, direction)) {
      assertThat(group.bytesPerRequest()).isEqualTo(4 * 3 * 4096L);
    }
  }
}
