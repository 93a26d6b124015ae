package io.kvbridge.benchmarks.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.integrity.ChecksumScheme;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class ReadPairTest {

  @ParameterizedTest
  @EnumSource(ReadPair.Polling.class)
  void aReadThroughTheFakeTransportReproducesThePrefillBytes(ReadPair.Polling polling) {
    try (ReadPair pair = ReadPair.overFake(ReadShape.parse("4KiBx3"))) {
      pair.read(polling);

      assertThat(pair.decodeHoldsPrefillBytes()).isTrue();
    }
  }

  @ParameterizedTest
  @EnumSource(ReadPair.Polling.class)
  void aReadFromPreparedListsReproducesThePrefillBytesEveryTime(ReadPair.Polling polling) {
    try (ReadPair pair = ReadPair.overFake(ReadShape.parse("4KiBx3"))) {
      pair.readPrepared(polling);
      pair.readPrepared(polling);

      assertThat(pair.decodeHoldsPrefillBytes()).isTrue();
    }
  }

  @Test
  void theRawCopyReproducesThePrefillBytes() {
    try (ReadPair pair = ReadPair.overFake(ReadShape.parse("4KiBx3"))) {
      pair.copy();

      assertThat(pair.copyHoldsPrefillBytes()).isTrue();
      assertThat(pair.decodeHoldsPrefillBytes()).isFalse();
    }
  }

  @Test
  void aTrialIsCheckedOnlyOnTheSideItRan() {
    try (ReadPair pair = ReadPair.overFake(ReadShape.parse("4KiBx3"))) {
      pair.copy();

      assertThat(pair.whatRanReproducedTheSource()).isTrue();
      pair.read(ReadPair.Polling.SPIN);
      assertThat(pair.whatRanReproducedTheSource()).isTrue();
    }
  }

  @ParameterizedTest
  @EnumSource(ChecksumScheme.class)
  void afterAReadTheChecksumsOfTheReadBlocksAreThoseOfTheSource(ChecksumScheme scheme) {
    try (ReadPair pair = ReadPair.overFake(ReadShape.parse("8KiBx3"))) {
      int[] before = pair.checksumsOfRead(scheme);
      pair.read(ReadPair.Polling.SPIN);

      assertThat(pair.checksumsOfRead(scheme))
          .hasSize(3)
          .isEqualTo(pair.checksumsOfSource(scheme))
          .isNotEqualTo(before);
    }
  }

  @Test
  void shapesParseWithTheirUnit() {
    assertThat(ReadShape.parse("16MiBx16")).isEqualTo(new ReadShape(16L << 20, 16));
    assertThat(ReadShape.parse("256KiBx1").totalBytes()).isEqualTo(256L << 10);
  }

  @Test
  void shapesOverTheCapAreRefusedWithTheCap() {
    assertThatThrownBy(() -> ReadShape.parse("16MiBx256"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(String.valueOf(ReadShape.MAX_TOTAL_BYTES));
  }
}
