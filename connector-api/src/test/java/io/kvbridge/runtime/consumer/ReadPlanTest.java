package io.kvbridge.runtime.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.layout.KvLayout.MemoryOrder;
import io.kvbridge.spi.ReadStaging;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.Test;

/**
 * A read plan previews what the consumer's planner posts; where the bytes land is specified by
 * {@link TransferPlannerTest}.
 */
class ReadPlanTest {

  private static final KvLayout MODEL =
      new KvLayout("m", 2, 3, 2, 4, 0, 4, 8, 16, 64, MemoryOrder.HEAD_MAJOR);

  @Test
  void identicalShapesReadOneDescriptorPerRankForConsecutiveBlocks() {
    ReadPlan plan =
        ReadPlan.of(ranks(MODEL, 2), ranks(MODEL, 2), blocks(4, 6), blocks(20, 6), 96, 0);

    assertThat(plan.reads())
        .extracting(ReadPlan.Read::consumerRank, ReadPlan.Read::producerRank)
        .containsExactly(Tuple.tuple(0, 0), Tuple.tuple(1, 1));
    assertThat(plan.descriptors()).isEqualTo(2);
    assertThat(plan.bytes()).isEqualTo(96L * 3 * 2 * 4 * 8 * 2);
  }

  @Test
  void everyTokenNotSkippedIsReadOnceWhateverTheShapes() {
    KvLayout consumer = MODEL.withTokensPerBlock(32);

    ReadPlan plan =
        ReadPlan.of(ranks(MODEL, 1), ranks(consumer, 4), blocks(0, 6), blocks(8, 3), 87, 40);

    // 40 skipped tokens round down to one 32-token consumer block: 55 tokens read.
    assertThat(plan.bytes()).isEqualTo(55L * 3 * 2 * 4 * 8 * 2);
    assertThat(plan.reads())
        .hasSize(4)
        .allSatisfy(read -> assertThat(read.producerRank()).isZero());
  }

  @Test
  void theDescriptorsHandedOutAreThoseCountedAndSumToTheBytes() {
    ReadPlan plan =
        ReadPlan.of(
            ranks(MODEL, 4),
            ranks(MODEL.withTokensPerBlock(8), 2),
            blocks(0, 6),
            blocks(30, 12),
            96,
            0);

    for (ReadPlan.Read read : plan.reads()) {
      List<Long> lengths = new ArrayList<>();
      read.forEachDescriptor((producerOffset, consumerOffset, length) -> lengths.add(length));

      assertThat(lengths).hasSize(read.descriptors());
      assertThat(lengths.stream().mapToLong(Long::longValue).sum()).isEqualTo(read.bytes());
    }
  }

  @Test
  void blocksThatDoNotHoldTheTokensAreRefused() {
    assertThatThrownBy(
            () -> ReadPlan.of(ranks(MODEL, 1), ranks(MODEL, 1), blocks(0, 5), blocks(0, 6), 96, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "read plan: producer blocks: 5 blocks of 16 tokens do not hold exactly 96 tokens");
  }

  @Test
  void tooFewConsumerBlocksAreRefused() {
    assertThatThrownBy(
            () -> ReadPlan.of(ranks(MODEL, 1), ranks(MODEL, 1), blocks(0, 6), blocks(0, 5), 96, 0))
        .hasMessage("read plan: consumer blocks: 96 tokens need 6 blocks of 16 tokens, got 5");
  }

  @Test
  void aBlockIdOutsideThePoolIsRefused() {
    assertThatThrownBy(
            () -> ReadPlan.of(ranks(MODEL, 1), ranks(MODEL, 1), blocks(60, 6), blocks(0, 6), 96, 0))
        .hasMessage("read plan: producer block id 64 is outside the producer's pool of 64 blocks");
  }

  @Test
  void ranksThatAreNotOneEnginesAreRefused() {
    List<KvLayout> gap = List.of(MODEL.forRank(0, 2));

    assertThatThrownBy(() -> ReadPlan.of(ranks(MODEL, 1), gap, blocks(0, 6), blocks(0, 6), 96, 0))
        .hasMessage("read plan: consumer ranks: the ranks hold 2 of the model's 4 KV heads");
  }

  @Test
  void shapesThatCannotBeTranslatedAreRefused() {
    KvLayout otherDim = new KvLayout("m", 2, 3, 2, 4, 0, 4, 16, 16, 64, MemoryOrder.HEAD_MAJOR);

    assertThatThrownBy(
            () ->
                ReadPlan.of(ranks(MODEL, 1), List.of(otherDim), blocks(0, 6), blocks(0, 6), 96, 0))
        .hasMessageStartingWith("read plan: the shapes cannot be translated: head_dim 16 vs 8");
  }

  @Test
  void aLongReadIsStagedInUpToEightRunsOfBlocksEndingInAHalfAndAQuarterAndAShortOneIsOneStage() {
    long mib = 1 << 20;
    // 1 GiB over 512 blocks: six stages of about 76 blocks, then 38 and 19, from block 10 on.
    assertThat(ReadPlan.stageBounds(10, 512, 1024 * mib, ReadPlan.MIN_STAGE_BYTES, Long.MAX_VALUE))
        .containsExactly(10, 86, 162, 238, 313, 389, 465, 503, 522);
    // 40 MiB: three stages would leave a last one of 5.7 MiB; two end in one of 13.3 MiB.
    assertThat(ReadPlan.stageBounds(0, 5, 40 * mib, ReadPlan.MIN_STAGE_BYTES, Long.MAX_VALUE))
        .containsExactly(0, 3, 5);
    // Below 24 MiB the last of two stages is under 8 MiB: one stage.
    assertThat(ReadPlan.stageBounds(0, 5, 20 * mib, ReadPlan.MIN_STAGE_BYTES, Long.MAX_VALUE))
        .containsExactly(0, 5);
    assertThat(ReadPlan.stageBounds(3, 7, 15 * mib, ReadPlan.MIN_STAGE_BYTES, Long.MAX_VALUE))
        .containsExactly(3, 10);
    // Never more stages than blocks, each at least one block.
    assertThat(ReadPlan.stageBounds(0, 3, 1024 * mib, ReadPlan.MIN_STAGE_BYTES, Long.MAX_VALUE))
        .containsExactly(0, 1, 2, 3);
  }

  @Test
  void aStageIsAtMostHalfTheStagingAreaEvenIfThatTakesMoreStagesThanTheUsualEight() {
    long mib = 1 << 20;
    long max = ReadPlan.maxStageBytes(new ReadStaging(ReadStaging.Mode.AUTO, 512 * mib));

    // 4 GiB over 2,048 blocks: stages of at most 256 MiB, the last two a half and a quarter.
    int[] bounds = ReadPlan.stageBounds(0, 2048, 4096 * mib, ReadPlan.MIN_STAGE_BYTES, max);

    assertThat(bounds).hasSize(19).startsWith(0).endsWith(2048);
    for (int s = 0; s + 1 < bounds.length; s++) {
      assertThat((long) (bounds[s + 1] - bounds[s]) * 2 * mib).isLessThanOrEqualTo(max);
    }
    assertThat(ReadPlan.maxStageBytes(new ReadStaging(ReadStaging.Mode.NEVER, 512 * mib)))
        .isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void differentMemoryOrdersArePlannedVectorByVector() {
    KvLayout blockMajor = MODEL.withMemory(MemoryOrder.BLOCK_MAJOR, KvLayout.Placement.PER_LAYER);

    ReadPlan plan =
        ReadPlan.of(ranks(MODEL, 1), List.of(blockMajor), blocks(0, 6), blocks(0, 6), 96, 0);

    // A head's tokens are adjacent in the producer's slabs, a token's heads in the consumer's: no
    // two vectors are adjacent on both sides. 96 tokens × 3 layers × 2 planes × 4 heads.
    assertThat(plan.descriptors()).isEqualTo(96 * 3 * 2 * 4);
    assertThat(plan.bytes()).isEqualTo(96L * MODEL.blockBytes() / 16);
  }

  @Test
  void producerRanksThatAreNotOneEnginesAreRefused() {
    List<KvLayout> gap = List.of(MODEL.forRank(1, 2));

    assertThatThrownBy(() -> ReadPlan.of(gap, ranks(MODEL, 1), blocks(0, 6), blocks(0, 6), 96, 0))
        .hasMessageStartingWith("read plan: producer ranks: ");
  }

  @Test
  void aConsumerBlockIdOutsideThePoolIsRefused() {
    assertThatThrownBy(
            () -> ReadPlan.of(ranks(MODEL, 1), ranks(MODEL, 1), blocks(0, 6), blocks(59, 6), 96, 0))
        .hasMessage("read plan: consumer block id 64 is outside the consumer's pool of 64 blocks");
  }

  @Test
  void noTokensIsRefused() {
    assertThatThrownBy(
            () -> ReadPlan.of(ranks(MODEL, 1), ranks(MODEL, 1), blocks(0, 6), blocks(0, 6), 0, 0))
        .hasMessage("read plan: tokens must be positive, got 0");
  }

  @Test
  void negativeSkipTokensAreRefused() {
    assertThatThrownBy(
            () -> ReadPlan.of(ranks(MODEL, 1), ranks(MODEL, 1), blocks(0, 6), blocks(0, 6), 96, -1))
        .hasMessage("read plan: skip_tokens must be 0 or more, got -1");
  }

  @Test
  void aReadDescribesItselfByItsRanksAndDescriptors() {
    ReadPlan plan =
        ReadPlan.of(ranks(MODEL, 2), ranks(MODEL, 2), blocks(4, 6), blocks(20, 6), 96, 0);

    assertThat(plan.reads().get(1))
        .hasToString("READ of consumer rank 1 from producer rank 1: 1 descriptors");
  }

  private static List<KvLayout> ranks(KvLayout model, int tp) {
    return IntStream.range(0, tp).mapToObj(r -> model.forRank(r, tp)).toList();
  }

  private static List<Integer> blocks(int first, int count) {
    return IntStream.range(first, first + count).boxed().toList();
  }
}
