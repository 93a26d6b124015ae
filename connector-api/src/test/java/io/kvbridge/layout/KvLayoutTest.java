package io.kvbridge.layout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.util.List;
import org.junit.jupiter.api.Test;

class KvLayoutTest {

  private static final KvLayout MODEL =
      new KvLayout("m@1", 2, 3, 2, 8, 0, 8, 16, 4, 10, KvLayout.MemoryOrder.HEAD_MAJOR);

  @Test
  void aBlockHoldsEveryLayerPlaneHeadAndTokenOfTheRank() {
    assertThat(MODEL.blockBytes()).isEqualTo(3 * 2 * 8 * 4 * 16 * 2);
    assertThat(MODEL.forRank(1, 4).blockBytes()).isEqualTo(MODEL.blockBytes() / 4);
  }

  @Test
  void headMajorKeepsAHeadsTokensTogetherAndBlockMajorATokensHeads() {
    KvLayout blockMajor =
        new KvLayout("m@1", 2, 3, 2, 8, 0, 8, 16, 4, 10, KvLayout.MemoryOrder.BLOCK_MAJOR);
    int vector = 16 * 2;

    assertThat(MODEL.offsetInBlock(0, 0, 0, 1) - MODEL.offsetInBlock(0, 0, 0, 0)).isEqualTo(vector);
    assertThat(blockMajor.offsetInBlock(0, 0, 1, 0) - blockMajor.offsetInBlock(0, 0, 0, 0))
        .isEqualTo(vector);
    assertThat(MODEL.offsetInBlock(2, 1, 7, 3)).isEqualTo(MODEL.blockBytes() - vector);
    assertThat(blockMajor.offsetInBlock(2, 1, 7, 3)).isEqualTo(blockMajor.blockBytes() - vector);
  }

  @Test
  void aRanksOffsetsCountFromItsFirstHead() {
    KvLayout rank1 = MODEL.forRank(1, 2);

    assertThat(rank1.headStart()).isEqualTo(4);
    assertThat(rank1.offsetInBlock(0, 0, 4, 0)).isZero();
    assertThat(rank1.holds(3)).isFalse();
    assertThat(rank1.holds(7)).isTrue();
  }

  @Test
  void theEncodedFormReadsBackEqual() throws Exception {
    KvLayout rank = MODEL.forRank(3, 4);

    KvLayout read = KvLayout.decode(new DataInputStream(new ByteArrayInputStream(rank.encode())));

    assertThat(read).isEqualTo(rank);
  }

  @Test
  void aModelNameLongerThanTheWireAllowsIsRefusedAtConstruction() {
    String longName = "é".repeat(KvLayout.MAX_MODEL_BYTES / 2 + 1);

    assertThatThrownBy(
            () ->
                new KvLayout(longName, 2, 1, 2, 1, 0, 1, 8, 4, 4, KvLayout.MemoryOrder.HEAD_MAJOR))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("1 to 256 bytes of UTF-8");
  }

  @Test
  void aTpDegreeThatDoesNotDivideTheHeadsHasNoRanks() {
    assertThatThrownBy(() -> MODEL.forRank(0, 3))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("equal share of 8 KV heads");
  }

  @Test
  void tensorParallelismAndBlockSizesInAnIntegerRatioTranslate() {
    assertThat(MODEL.forRank(0, 2).withTokensPerBlock(16).incompatibilityWith(MODEL)).isEmpty();
    assertThat(MODEL.withTokensPerBlock(6).incompatibilityWith(MODEL))
        .hasValueSatisfying(why -> assertThat(why).contains("tokens_per_block 6 vs 4"));
  }

  @Test
  void ranksThatLeaveAHeadOutDoNotPartitionTheModel() {
    assertThat(
            KvLayout.partitionProblem(
                List.of(MODEL.forRank(0, 4), MODEL.forRank(1, 4), MODEL.forRank(3, 4))))
        .hasValueSatisfying(why -> assertThat(why).contains("rank 2 holds heads from 6"));
    assertThat(KvLayout.partitionProblem(List.of(MODEL.forRank(0, 2), MODEL.forRank(1, 2))))
        .isEmpty();
  }

  @Test
  void theFingerprintCoversWhatMustMatchAndNothingATranslationBridges() {
    assertThat(MODEL.forRank(1, 2).withTokensPerBlock(16).withBlockCount(99).fingerprint())
        .isEqualTo(MODEL.fingerprint())
        .hasSize(32);
    assertThat(
            new KvLayout("m@1", 2, 3, 2, 8, 0, 8, 64, 4, 10, KvLayout.MemoryOrder.HEAD_MAJOR)
                .fingerprint())
        .isNotEqualTo(MODEL.fingerprint());
    assertThat(
            new KvLayout("m@1", 2, 3, 2, 8, 0, 8, 16, 4, 10, KvLayout.MemoryOrder.BLOCK_MAJOR)
                .fingerprint())
        .isNotEqualTo(MODEL.fingerprint());
  }
}
