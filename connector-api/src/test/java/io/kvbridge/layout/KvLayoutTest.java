package io.kvbridge.layout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.layout.KvLayout.MemoryOrder;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.List;
import java.util.stream.IntStream;
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

    assertThat(MODEL.offset(0, 0, 0, 0, 1) - MODEL.offset(0, 0, 0, 0, 0)).isEqualTo(vector);
    assertThat(blockMajor.offset(0, 0, 0, 1, 0) - blockMajor.offset(0, 0, 0, 0, 0))
        .isEqualTo(vector);
    assertThat(MODEL.offset(0, 2, 1, 7, 3)).isEqualTo(MODEL.blockBytes() - vector);
    assertThat(blockMajor.offset(0, 2, 1, 7, 3)).isEqualTo(blockMajor.blockBytes() - vector);
  }

  @Test
  void aRanksOffsetsCountFromItsFirstHead() {
    KvLayout rank1 = MODEL.forRank(1, 2);

    assertThat(rank1.headStart()).isEqualTo(4);
    assertThat(rank1.offset(0, 0, 0, 4, 0)).isZero();
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
  void anIncompatibilityToldToTheOtherEngineQuotesOnlyThisLayoutsValue() {
    KvLayout producer = MODEL.withTokensPerBlock(8);
    KvLayout.MemoryOrder blockMajor = KvLayout.MemoryOrder.BLOCK_MAJOR;

    assertThat(
            new KvLayout("other@2", 2, 3, 2, 8, 0, 8, 16, 4, 10, blockMajor)
                .incompatibilityQuotingOnlyThis(producer))
        .contains("model other@2 differs from the producer's");
    assertThat(
            new KvLayout("m@1", 2, 3, 2, 8, 0, 8, 32, 4, 10, blockMajor)
                .incompatibilityQuotingOnlyThis(producer))
        .contains("head_dim 32 differs from the producer's");
    assertThat(
            new KvLayout("m@1", 2, 3, 2, 8, 0, 8, 16, 8, 10, blockMajor)
                .withMemory(blockMajor, KvLayout.Placement.PER_LAYER_PLANE)
                .incompatibilityQuotingOnlyThis(producer))
        .as("another memory order and placement is translated vector by vector")
        .isEmpty();
    assertThat(MODEL.withTokensPerBlock(6).incompatibilityQuotingOnlyThis(producer))
        .hasValueSatisfying(
            why ->
                assertThat(why)
                    .startsWith("tokens_per_block 6 differs from the producer's: ")
                    .doesNotContain("8"));
    assertThat(MODEL.withTokensPerBlock(16).incompatibilityQuotingOnlyThis(producer)).isEmpty();
  }

  @Test
  void anIncompatibilityComparedLocallyQuotesBothValues() {
    KvLayout producer = MODEL.withTokensPerBlock(8);

    assertThat(
            new KvLayout("m@1", 2, 3, 2, 8, 0, 8, 32, 8, 10, KvLayout.MemoryOrder.HEAD_MAJOR)
                .incompatibilityWith(producer))
        .contains("head_dim 32 vs 16");
    assertThat(
            new KvLayout("other@2", 2, 3, 2, 8, 0, 8, 16, 8, 10, KvLayout.MemoryOrder.HEAD_MAJOR)
                .incompatibilityWith(producer))
        .contains("model other@2 vs m@1");
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
                .withMemory(KvLayout.MemoryOrder.BLOCK_MAJOR, KvLayout.Placement.PER_LAYER)
                .fingerprint())
        .as("the memory's order and placement are bridged by the planner")
        .isEqualTo(MODEL.fingerprint());
    assertThat(
            new KvLayout("m@1", 2, 3, 1, 8, 0, 8, 16, 4, 10, KvLayout.MemoryOrder.HEAD_MAJOR)
                .fingerprint())
        .isNotEqualTo(MODEL.fingerprint());
  }

  @Test
  void offsetsFollowTheMemoryOrderFromTheRanksFirstHead() {
    // 2 layers, K and V, heads 2 and 3 of 4, 4 tokens per block, vectors of 3 two-byte elements.
    KvLayout headMajor = new KvLayout("m@1", 2, 2, 2, 4, 2, 2, 3, 4, 5, MemoryOrder.HEAD_MAJOR);
    KvLayout blockMajor = new KvLayout("m@1", 2, 2, 2, 4, 2, 2, 3, 4, 5, MemoryOrder.BLOCK_MAJOR);

    assertThat(headMajor.vectorBytes()).isEqualTo(6);
    assertThat(headMajor.blockBytes()).isEqualTo(2 * 2 * 2 * 4 * 6);
    assertThat(headMajor.totalBytes()).isEqualTo(5 * 192);
    // head-major: (((layer × 2 + plane) × 2 + head − 2) × 4 + token) × 6
    assertThat(headMajor.offset(0, 0, 0, 2, 0)).isZero();
    assertThat(headMajor.offset(0, 0, 1, 2, 3)).isEqualTo(((1 * 2 + 0) * 4 + 3) * 6);
    assertThat(headMajor.offset(0, 1, 0, 3, 2)).isEqualTo(((2 * 2 + 1) * 4 + 2) * 6);
    // block-major: (((layer × 2 + plane) × 4 + token) × 2 + head − 2) × 6
    assertThat(blockMajor.offset(0, 0, 0, 2, 0)).isZero();
    assertThat(blockMajor.offset(0, 0, 1, 2, 3)).isEqualTo(((1 * 4 + 3) * 2 + 0) * 6);
    assertThat(blockMajor.offset(0, 1, 0, 3, 2)).isEqualTo(((2 * 4 + 2) * 2 + 1) * 6);
  }

  @Test
  void aRankHoldsHeadsFromItsFirstUpToButExcludingTheNextRanksFirst() {
    KvLayout rank1 = MODEL.forRank(1, 2);

    assertThat(rank1.holds(4)).isTrue();
    assertThat(rank1.holds(8)).isFalse();
  }

  @Test
  void eachCountThatMustBePositiveIsRefusedAtZeroNamingItsField() {
    assertRefused(() -> layout(0, 3, 8, 0, 8, 16, 4, 10), "dtype_bytes must be positive, got 0");
    assertRefused(() -> layout(2, 0, 8, 0, 8, 16, 4, 10), "layers must be positive, got 0");
    assertRefused(() -> layout(2, 3, 0, 0, 8, 16, 4, 10), "kv_heads must be positive, got 0");
    assertRefused(() -> layout(2, 3, 8, 0, 0, 16, 4, 10), "head_count must be positive, got 0");
    assertRefused(() -> layout(2, 3, 8, 0, 8, 0, 4, 10), "head_dim must be positive, got 0");
    assertRefused(
        () -> layout(2, 3, 8, 0, 8, 16, 0, 10), "tokens_per_block must be positive, got 0");
    assertRefused(() -> layout(2, 3, 8, 0, 8, 16, 4, 0), "block_count must be positive, got 0");
    assertRefused(() -> layout(2, -1, 8, 0, 8, 16, 4, 10), "layers must be positive, got -1");
  }

  @Test
  void planesAreOneOrTwo() {
    assertRefused(
        () -> new KvLayout("m@1", 2, 3, 0, 8, 0, 8, 16, 4, 10, MemoryOrder.HEAD_MAJOR),
        "planes must be 1 or 2, got 0");
    assertRefused(
        () -> new KvLayout("m@1", 2, 3, 3, 8, 0, 8, 16, 4, 10, MemoryOrder.HEAD_MAJOR),
        "planes must be 1 or 2, got 3");
    assertThat(new KvLayout("m@1", 2, 3, 1, 8, 0, 8, 16, 4, 10, MemoryOrder.HEAD_MAJOR).planes())
        .isEqualTo(1);
  }

  @Test
  void aRanksHeadsMustLieWithinTheModelsHeads() {
    assertThat(layout(2, 3, 8, 4, 4, 16, 4, 10).holds(7)).isTrue();
    assertRefused(
        () -> layout(2, 3, 8, 5, 4, 16, 4, 10), "heads [5, 9) are not within the model's 8");
    assertRefused(
        () -> layout(2, 3, 8, -1, 4, 16, 4, 10), "heads [-1, 3) are not within the model's 8");
  }

  @Test
  void theLargestValuesTheEncodingCarriesAreAcceptedAndReadBackEqual() throws IOException {
    for (KvLayout largest :
        List.of(
            layout(255, 3, 8, 0, 8, 16, 4, 10),
            layout(2, 65_535, 8, 0, 8, 16, 4, 10),
            layout(2, 3, 65_535, 65_527, 8, 16, 4, 10),
            layout(2, 3, 8, 0, 8, 65_535, 4, 10))) {
      assertThat(decode(largest.encode())).isEqualTo(largest);
    }
  }

  @Test
  void valuesBeyondWhatTheEncodingCarriesAreRefused() {
    String message = "dtype_bytes up to 255, layers, kv_heads and head_dim up to 65535";
    assertRefused(() -> layout(256, 3, 8, 0, 8, 16, 4, 10), message);
    assertRefused(() -> layout(2, 65_536, 8, 0, 8, 16, 4, 10), message);
    assertRefused(() -> layout(2, 3, 65_536, 0, 8, 16, 4, 10), message);
    assertRefused(() -> layout(2, 3, 8, 0, 8, 65_536, 4, 10), message);
  }

  @Test
  void aBlockOfUpTo2GiBLessOneByteIsAccepted() {
    KvLayout largest =
        new KvLayout("m@1", 1, 1, 1, 1, 0, 1, 1, Integer.MAX_VALUE, 1, MemoryOrder.HEAD_MAJOR);

    assertThat(largest.blockBytes()).isEqualTo(Integer.MAX_VALUE);
  }

  @Test
  void aBlockOf2GiBIsRefusedWhicheverSizesMakeItUp() {
    // 2 × 2 × 2 × 16384 tokens × 8192 elements × 2 bytes = 2³¹ bytes.
    assertRefused(
        () -> new KvLayout("m@1", 2, 2, 2, 2, 0, 2, 8192, 16_384, 1, MemoryOrder.HEAD_MAJOR),
        "a block of 2147483648 bytes is larger than 2 GiB; use smaller blocks");
    assertRefused(
        () ->
            new KvLayout("m@1", 1, 1, 2, 1, 0, 1, 1, Integer.MAX_VALUE, 1, MemoryOrder.HEAD_MAJOR),
        "a block of 4294967294 bytes is larger than 2 GiB");
  }

  @Test
  void aModelNameOfExactlyTheLongestLengthIsAcceptedAndReadBack() throws IOException {
    String longest = "é".repeat(KvLayout.MAX_MODEL_BYTES / 2);
    KvLayout layout = new KvLayout(longest, 2, 1, 2, 1, 0, 1, 8, 4, 4, MemoryOrder.HEAD_MAJOR);

    assertThat(decode(layout.encode())).isEqualTo(layout);
    assertRefused(
        () -> new KvLayout(" ", 2, 1, 2, 1, 0, 1, 8, 4, 4, MemoryOrder.HEAD_MAJOR),
        "model must be 1 to 256 bytes of UTF-8, got ' '");
  }

  @Test
  void aDecoderRefusesAModelNameOfNoBytesOrMoreThanTheLongest() {
    byte[] encoded = MODEL.encode();

    byte[] empty = encoded.clone();
    empty[0] = 0;
    empty[1] = 0;
    byte[] tooLong = encoded.clone();
    tooLong[0] = 1;
    tooLong[1] = 1;

    assertRefused(() -> decode(empty), "model name of 0 bytes");
    assertRefused(() -> decode(tooLong), "model name of 257 bytes");
  }

  @Test
  void aDecoderRefusesAnUnknownMemoryOrder() throws IOException {
    byte[] encoded = MODEL.encode();
    encoded[encoded.length - 2] = 0;
    assertThat(decode(encoded).order()).isEqualTo(MemoryOrder.BLOCK_MAJOR);

    for (int order : new int[] {2, 255}) {
      encoded[encoded.length - 2] = (byte) order;
      assertRefused(() -> decode(encoded), "unknown memory order " + order);
    }
  }

  @Test
  void aDecoderRefusesAnUnknownPlacement() throws IOException {
    byte[] encoded = MODEL.encode();
    encoded[encoded.length - 1] = 3;
    assertThat(decode(encoded).placement()).isEqualTo(KvLayout.Placement.PER_LAYER_PLANE);

    for (int placement : new int[] {4, 255}) {
      encoded[encoded.length - 1] = (byte) placement;
      assertRefused(() -> decode(encoded), "unknown placement " + placement);
    }
  }

  @Test
  void oneRankOfOneHoldsEveryHead() {
    assertThat(MODEL.forRank(0, 1)).isEqualTo(MODEL);
  }

  @Test
  void aRankOutsideTheTpDegreeOrADegreeBelowOneHasNoLayout() {
    assertRefused(
        () -> MODEL.forRank(4, 4), "rank 4 of 4 can hold neither an equal share of 8 KV heads");
    assertRefused(
        () -> MODEL.forRank(-1, 4), "rank -1 of 4 can hold neither an equal share of 8 KV heads");
    assertRefused(
        () -> MODEL.forRank(0, 0), "rank 0 of 0 can hold neither an equal share of 8 KV heads");
    assertRefused(
        () -> MODEL.forRank(0, 12),
        "rank 0 of 12 can hold neither an equal share of 8 KV heads nor one of them as an equal"
            + " number of replicas");
    assertThat(MODEL.forRank(3, 4).headStart()).isEqualTo(6);
  }

  @Test
  void withMoreRanksThanHeadsConsecutiveRanksHoldTheSameHead() {
    List<KvLayout> ranks = IntStream.range(0, 16).mapToObj(r -> MODEL.forRank(r, 16)).toList();

    assertThat(ranks).extracting(KvLayout::headStart).startsWith(0, 0, 1, 1, 2).endsWith(7, 7);
    assertThat(ranks).extracting(KvLayout::headCount).containsOnly(1);
    assertThat(KvLayout.partitionProblem(ranks)).isEmpty();
  }

  @Test
  void aReplicaMustRepeatTheRankBeforeIt() {
    List<KvLayout> ranks = List.of(MODEL.forRank(0, 2), MODEL.forRank(1, 2), MODEL.forRank(0, 2));

    assertThat(KvLayout.partitionProblem(ranks))
        .contains("rank 2 holds heads from 0, expected from 8 (or rank 1's heads again)");
  }

  @Test
  void noRanksOrRanksThatDifferBeyondTheirHeadsDoNotPartitionTheModel() {
    KvLayout rank0 = MODEL.forRank(0, 2);
    KvLayout rank1 = MODEL.forRank(1, 2);

    assertThat(KvLayout.partitionProblem(List.of())).contains("an engine has at least one rank");
    for (KvLayout other :
        List.of(
            rank1.withBlockCount(11),
            rank1.withTokensPerBlock(8),
            new KvLayout("m@2", 2, 3, 2, 8, 4, 4, 16, 4, 10, MemoryOrder.HEAD_MAJOR),
            new KvLayout("m@1", 1, 3, 2, 8, 4, 4, 16, 4, 10, MemoryOrder.HEAD_MAJOR),
            new KvLayout("m@1", 2, 4, 2, 8, 4, 4, 16, 4, 10, MemoryOrder.HEAD_MAJOR),
            new KvLayout("m@1", 2, 3, 1, 8, 4, 4, 16, 4, 10, MemoryOrder.HEAD_MAJOR),
            new KvLayout("m@1", 2, 3, 2, 9, 4, 4, 16, 4, 10, MemoryOrder.HEAD_MAJOR),
            new KvLayout("m@1", 2, 3, 2, 8, 4, 4, 32, 4, 10, MemoryOrder.HEAD_MAJOR),
            new KvLayout("m@1", 2, 3, 2, 8, 4, 4, 16, 4, 10, MemoryOrder.BLOCK_MAJOR))) {
      assertThat(KvLayout.partitionProblem(List.of(rank0, other)))
          .as("%s", other)
          .contains("rank 1's layout differs from rank 0's beyond its heads");
    }
  }

  @Test
  void ranksThatHoldOnlySomeOfTheHeadsDoNotPartitionTheModel() {
    assertThat(KvLayout.partitionProblem(List.of(MODEL.forRank(0, 2))))
        .contains("the ranks hold 4 of the model's 8 KV heads");
  }

  /** A layout of model m@1, two planes, head-major, with the other fields as given. */
  private static KvLayout layout(
      int dtypeBytes,
      int layers,
      int kvHeads,
      int headStart,
      int headCount,
      int headDim,
      int tokensPerBlock,
      int blockCount) {
    return new KvLayout(
        "m@1",
        dtypeBytes,
        layers,
        2,
        kvHeads,
        headStart,
        headCount,
        headDim,
        tokensPerBlock,
        blockCount,
        MemoryOrder.HEAD_MAJOR);
  }

  private static KvLayout decode(byte[] encoded) throws IOException {
    return KvLayout.decode(new DataInputStream(new ByteArrayInputStream(encoded)));
  }

  private static void assertRefused(
      org.assertj.core.api.ThrowableAssert.ThrowingCallable construction, String why) {
    assertThatThrownBy(construction)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("KV layout: ")
        .hasMessageContaining(why);
  }
}
