package io.kvbridge.runtime.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.layout.KvLayout.MemoryOrder;
import io.kvbridge.layout.KvLayout.Placement;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The planner moves every used byte of a lease to the right place, whatever the two sides' tensor
 * parallelism, block sizes and memory order: each test fills the producer's ranks with bytes that
 * name their (layer, plane, head, token, byte), applies the plan by copying, and checks every byte
 * of the consumer's ranks.
 */
class TransferPlannerTest {

  private static final int LAYERS = 2;
  private static final int PLANES = 2;
  private static final int HEADS = 4;
  private static final int HEAD_DIM = 2;
  private static final int DTYPE = 2;
  private static final int BLOCKS = 40;
  private static final MemoryOrder BM = MemoryOrder.BLOCK_MAJOR;
  private static final MemoryOrder HM = MemoryOrder.HEAD_MAJOR;
  private static final Placement CROSS = Placement.CROSS_LAYER;

  /**
   * The two sides' memory: the same cross-layer order (as most tests), per-layer placements of
   * either order against other placements, and different orders (translated vector by vector).
   */
  static final List<Memory[]> MEMORIES =
      List.of(
          new Memory[] {Memory.of(BM, CROSS), Memory.of(BM, CROSS)},
          new Memory[] {Memory.of(HM, CROSS), Memory.of(HM, CROSS)},
          new Memory[] {Memory.of(BM, Placement.PER_LAYER), Memory.of(BM, CROSS)},
          new Memory[] {
            Memory.of(HM, Placement.PER_LAYER_BLOCK_FIRST), Memory.of(HM, Placement.PER_LAYER_PLANE)
          },
          new Memory[] {Memory.of(HM, CROSS), Memory.of(BM, Placement.PER_LAYER)},
          new Memory[] {
            Memory.of(BM, Placement.PER_LAYER_PLANE), Memory.of(HM, Placement.PER_LAYER_BLOCK_FIRST)
          });

  /** How one side keeps its slabs. */
  record Memory(MemoryOrder order, Placement placement) {
    static Memory of(MemoryOrder order, Placement placement) {
      return new Memory(order, placement);
    }

    @Override
    public String toString() {
      return placement + "/" + order;
    }
  }

  static Stream<Arguments> shapes() {
    List<Arguments> all = new ArrayList<>();
    for (Memory[] memory : MEMORIES) {
      // 8 ranks of 4 heads: each head on two ranks (replicated KV).
      for (int p : new int[] {1, 2, 4, 8}) {
        for (int d : new int[] {1, 2, 4, 8}) {
          for (int[] blocks : new int[][] {{16, 32}, {16, 16}, {32, 16}, {8, 32}}) {
            for (int tokens : new int[] {96, 87}) {
              for (int skip : new int[] {0, 40}) {
                all.add(
                    Arguments.of(memory[0], memory[1], p, d, blocks[0], blocks[1], tokens, skip));
              }
            }
          }
        }
      }
    }
    return all.stream();
  }

  @ParameterizedTest(name = "{0} -> {1} p={2} d={3} blocks {4}/{5} tokens={6} skip={7}")
  @MethodSource("shapes")
  void everyUsedByteLandsWhereTheConsumerExpectsIt(
      Memory pMemory,
      Memory dMemory,
      int p,
      int d,
      int pTokens,
      int dTokens,
      int tokens,
      int skip) {
    Shape shape = new Shape(pMemory, dMemory, p, d, pTokens, dTokens, tokens, skip);

    shape.apply(TransferPlanner.plan(shape.load()));

    shape.checkConsumer();
  }

  @ParameterizedTest(name = "{0} -> {1} p={2} d={3} blocks {4}/{5} tokens={6} skip={7}")
  @MethodSource("shapes")
  void everyUsedByteLandsWhereTheConsumerExpectsItWhenEveryPairThatCanIsStagedInTwoStages(
      Memory pMemory,
      Memory dMemory,
      int p,
      int d,
      int pTokens,
      int dTokens,
      int tokens,
      int skip) {
    Shape shape = new Shape(pMemory, dMemory, p, d, pTokens, dTokens, tokens, skip);
    TransferPlanner.Request load = shape.load();
    int first = load.firstBlock();
    int end = load.producerBlocks().size();
    int mid = (first + end) / 2;

    for (int[] stage : new int[][] {{first, mid}, {mid, end}}) {
      shape.applyStaged(load, stage[0], stage[1]);
    }

    shape.checkConsumer();
  }

  @Test
  void aStagedPairReadsOneSlabPerBlockLayerAndPlaneAndScattersOneRowPerToken() {
    // P TP 1 -> D TP 2, block-major: in place, a piece per token, layer and plane.
    Shape shape = new Shape(BM, 1, 2, 16, 16, 96, 0);
    TransferPlanner.Request load = shape.load();
    int blocks = load.producerBlocks().size();

    Map<TransferPlanner.RankPair, TransferPlanner.Pieces> inPlace = TransferPlanner.plan(load);
    Map<TransferPlanner.RankPair, TransferPlanner.Pieces> staged =
        TransferPlanner.plan(load, 0, blocks, (r, q) -> true);

    TransferPlanner.StagingEstimate estimate = TransferPlanner.estimate(load, 1, 0, 0, blocks);
    TransferPlanner.Pieces rankOne = staged.get(new TransferPlanner.RankPair(1, 0));
    assertThat(inPlace.get(new TransferPlanner.RankPair(1, 0))).hasSize(96 * LAYERS * PLANES);
    assertThat(estimate.inPlaceDescriptors()).isEqualTo(96L * LAYERS * PLANES);
    // Cross-layer slabs of one block follow each other, and so do their spans in staging only
    // where a slab is read whole; half of each token's heads is not.
    assertThat(rankOne).hasSize(blocks * LAYERS * PLANES);
    assertThat(estimate.stagedDescriptors()).isEqualTo((long) blocks * LAYERS * PLANES);
    assertThat(rankOne.stream().mapToLong(TransferPlanner.Piece::length).sum())
        .isEqualTo(estimate.stagedBytes())
        .isEqualTo(TransferPlanner.stagedBytes(load, 1, 0, 0, blocks));
    TransferPlanner.Scatter scatter = rankOne.scatter().orElseThrow();
    long rows = 0;
    for (int i = 0; i < scatter.copyCount(); i++) {
      rows += scatter.rows(i);
    }
    assertThat(rows).isEqualTo(estimate.rows()).isEqualTo(96L * LAYERS * PLANES);
    assertThat((long) scatter.copyCount()).isEqualTo(estimate.copies());
    assertThat(scatter.width()).isEqualTo(HEADS / 2 * HEAD_DIM * DTYPE);
    assertThat(scatter.sourcePitch()).isEqualTo(HEADS * HEAD_DIM * DTYPE);
    assertThat(scatter.targetPitch()).isEqualTo(HEADS / 2 * HEAD_DIM * DTYPE);
  }

  @Test
  void onlyPairsThatSplitATokensHeadsDifferentlyInBlockMajorMemoryCanBeStaged() {
    assertThat(TransferPlanner.stageable(new Shape(BM, 1, 2, 16, 16, 96, 0).load(), 0, 0)).isTrue();
    assertThat(TransferPlanner.stageable(new Shape(BM, 2, 1, 16, 16, 96, 0).load(), 0, 1)).isTrue();
    assertThat(TransferPlanner.stageable(new Shape(BM, 2, 2, 16, 16, 96, 0).load(), 1, 1))
        .as("the same heads on both sides: rows already join")
        .isFalse();
    assertThat(TransferPlanner.stageable(new Shape(HM, 1, 2, 16, 16, 96, 0).load(), 0, 0))
        .as("head-major: a head's tokens are already one piece")
        .isFalse();
    assertThat(TransferPlanner.stageable(new Shape(BM, 2, 2, 16, 16, 96, 0).load(), 0, 1))
        .as("a pair that exchanges nothing")
        .isFalse();
  }

  @ParameterizedTest(name = "{0} -> {1} p={2} d={3} blocks {4}/{5} tokens={6} skip={7}")
  @MethodSource("shapes")
  void segmentsOfABlockCoverExactlyItsUsedBytesInTheProducersOrder(
      Memory pMemory,
      Memory dMemory,
      int p,
      int d,
      int pTokens,
      int dTokens,
      int tokens,
      int skip) {
    Shape shape = new Shape(pMemory, dMemory, p, d, pTokens, dTokens, tokens, skip);
    TransferPlanner.Request load = shape.load();

    for (int index = load.firstBlock(); index < load.producerBlocks().size(); index++) {
      for (int q = 0; q < p; q++) {
        if (!readFrom(load, q)) {
          continue; // every head of q is read from another rank that holds it too
        }
        ByteArrayOutputStream segmentsSeen = new ByteArrayOutputStream();
        int rank = q;
        int block = index;
        TransferPlanner.segments(
            load,
            q,
            index,
            (producerRank, producerOffset, consumerRank, consumerOffset, length) ->
                segmentsSeen.write(
                    shape.producer[rank],
                    Shape.flat(load.producer().get(rank), producerOffset),
                    (int) length));
        ByteArrayOutputStream used = new ByteArrayOutputStream();
        KvLayout layout = load.producer().get(q);
        layout.forEachUsedRange(
            load.producerBlocks().get(block),
            load.usedTokens(block),
            (at, length) -> used.write(shape.producer[rank], Shape.flat(layout, at), (int) length));
        assertThat(segmentsSeen.toByteArray()).isEqualTo(used.toByteArray());
      }
    }
  }

  private static boolean readFrom(TransferPlanner.Request load, int q) {
    for (int r = 0; r < load.consumer().size(); r++) {
      if (TransferPlanner.readRange(load, r, q) != null) {
        return true;
      }
    }
    return false;
  }

  @ParameterizedTest(name = "p={0} d={1}")
  @MethodSource("replicatedPairs")
  void aReplicatedHeadIsReadOncePerConsumerRankAndTheReadsSpreadOverItsHolders(int p, int d) {
    Shape shape = new Shape(MemoryOrder.HEAD_MAJOR, p, d, 16, 16, 64, 0);
    Map<TransferPlanner.RankPair, TransferPlanner.Pieces> plan = TransferPlanner.plan(shape.load());

    long bytes = 0;
    java.util.Set<Integer> producersRead = new java.util.TreeSet<>();
    for (var e : plan.entrySet()) {
      producersRead.add(e.getKey().producerRank());
      for (TransferPlanner.Piece piece : e.getValue()) {
        bytes += piece.length();
      }
    }
    // Each consumer rank gets its heads once: d ranks of HEADS / d heads (or one) of 64 tokens.
    long perConsumerRank = shape.consumerLayouts.get(0).blockBytes() / 16L * 64;
    assertThat(bytes).isEqualTo(perConsumerRank * d);
    assertThat(producersRead).hasSize(Math.min(p, Math.max(d, HEADS)));
  }

  static Stream<Arguments> replicatedPairs() {
    return Stream.of(
        Arguments.of(8, 8),
        Arguments.of(8, 4),
        Arguments.of(8, 1),
        Arguments.of(1, 8),
        Arguments.of(4, 8),
        Arguments.of(8, 2));
  }

  @Test
  void identicalShapesReadEachRunOfConsecutiveBlocksAsOnePiece() {
    Shape shape = new Shape(MemoryOrder.HEAD_MAJOR, 2, 2, 16, 16, 96, 0);

    Map<TransferPlanner.RankPair, TransferPlanner.Pieces> plan = TransferPlanner.plan(shape.load());

    assertThat(plan)
        .containsOnlyKeys(new TransferPlanner.RankPair(0, 0), new TransferPlanner.RankPair(1, 1));
    // Producer blocks 3..8 and consumer blocks 10..15 are both consecutive: one piece per rank.
    assertThat(plan.values()).allSatisfy(pieces -> assertThat(pieces).hasSize(1));
  }

  @Test
  void inBlockMajorOrderTheSameHeadsOnBothSidesAreOneSegmentPerConsumerBlockNotPerToken() {
    Shape shape = new Shape(MemoryOrder.BLOCK_MAJOR, 2, 2, 16, 8, 96, 0);
    List<TransferPlanner.Piece> segments = new ArrayList<>();

    TransferPlanner.segments(shape.load(), 1, 0, TransferPlanner.collecting(segments));

    // A 16-token block lands in two 8-token consumer blocks, for each layer and plane.
    assertThat(segments).hasSize(LAYERS * PLANES * 2);
  }

  @Test
  void aFullBlockOfAnIdenticalConsumerRankIsOneSegment() {
    Shape shape = new Shape(MemoryOrder.HEAD_MAJOR, 1, 1, 16, 16, 96, 0);
    List<TransferPlanner.Piece> segments = new ArrayList<>();

    TransferPlanner.segments(shape.load(), 0, 0, TransferPlanner.collecting(segments));

    KvLayout layout = shape.producerLayouts.get(0);
    assertThat(segments)
        .containsExactly(
            new TransferPlanner.Piece(
                0, 3L * layout.blockBytes(), 0, 10L * layout.blockBytes(), layout.blockBytes()));
  }

  @Test
  void inBlockMajorOrderTheFirstRanksSameHeadsAreOneSegmentPerConsumerBlock() {
    Shape shape = new Shape(MemoryOrder.BLOCK_MAJOR, 1, 1, 16, 8, 96, 0);
    List<TransferPlanner.Piece> segments = new ArrayList<>();

    TransferPlanner.segments(shape.load(), 0, 0, TransferPlanner.collecting(segments));

    assertThat(segments).hasSize(LAYERS * PLANES * 2);
  }

  @Test
  void onlyTheHeadsTheConsumersRanksHoldAreRead() {
    Shape shape = new Shape(MemoryOrder.HEAD_MAJOR, 1, 2, 16, 8, 96, 0);
    TransferPlanner.Request onlyFirstRank =
        new TransferPlanner.Request(
            shape.producerLayouts,
            shape.consumerLayouts.subList(0, 1),
            shape.producerBlocks,
            shape.consumerBlocks,
            96,
            0);

    long bytes = 0;
    for (List<TransferPlanner.Piece> read : TransferPlanner.plan(onlyFirstRank).values()) {
      for (TransferPlanner.Piece piece : read) {
        assertThat(piece.consumerRank()).isZero();
        bytes += piece.length();
      }
    }
    assertThat(bytes).isEqualTo(96L * LAYERS * PLANES * (HEADS / 2) * HEAD_DIM * DTYPE);
  }

  @Test
  void theConsumerNeedsEveryBlockUpToTheOneHoldingTheLastToken() {
    assertThat(new Shape(MemoryOrder.HEAD_MAJOR, 1, 1, 16, 16, 96, 0).load().consumerBlocksNeeded())
        .isEqualTo(6);
    assertThat(new Shape(MemoryOrder.HEAD_MAJOR, 1, 1, 16, 16, 87, 0).load().consumerBlocksNeeded())
        .isEqualTo(6);
    assertThat(new Shape(MemoryOrder.HEAD_MAJOR, 1, 1, 16, 8, 97, 0).load().consumerBlocksNeeded())
        .isEqualTo(13);
  }

  @Test
  void skippedTokensAreRoundedDownToWholeBlocksOfBothSides() {
    Shape shape = new Shape(MemoryOrder.HEAD_MAJOR, 1, 1, 16, 32, 96, 40);

    assertThat(shape.load().firstBlock()).isEqualTo(2); // 40 → 32 tokens, two 16-token blocks
  }

  /** Two engines' ranks over byte arrays, with a recognisable value in every byte. */
  private static final class Shape {
    final List<KvLayout> producerLayouts;
    final List<KvLayout> consumerLayouts;
    final byte[][] producer;
    final byte[][] consumer;
    final List<Integer> producerBlocks;
    final List<Integer> consumerBlocks;
    final int tokens;
    final int skip;

    Shape(MemoryOrder order, int p, int d, int pTokens, int dTokens, int tokens, int skip) {
      this(Memory.of(order, CROSS), Memory.of(order, CROSS), p, d, pTokens, dTokens, tokens, skip);
    }

    Shape(
        Memory pMemory,
        Memory dMemory,
        int p,
        int d,
        int pTokens,
        int dTokens,
        int tokens,
        int skip) {
      KvLayout pModel =
          new KvLayout(
              "m",
              DTYPE,
              LAYERS,
              PLANES,
              HEADS,
              0,
              HEADS,
              HEAD_DIM,
              pTokens,
              BLOCKS,
              pMemory.order(),
              pMemory.placement());
      KvLayout dModel =
          new KvLayout(
              "m",
              DTYPE,
              LAYERS,
              PLANES,
              HEADS,
              0,
              HEADS,
              HEAD_DIM,
              dTokens,
              BLOCKS,
              dMemory.order(),
              dMemory.placement());
      this.producerLayouts = IntStream.range(0, p).mapToObj(r -> pModel.forRank(r, p)).toList();
      this.consumerLayouts = IntStream.range(0, d).mapToObj(r -> dModel.forRank(r, d)).toList();
      this.tokens = tokens;
      this.skip = skip;
      int pNeeded = (tokens + pTokens - 1) / pTokens;
      int dNeeded = (tokens + dTokens - 1) / dTokens;
      this.producerBlocks = IntStream.range(0, pNeeded).map(i -> 3 + i).boxed().toList();
      // The consumer's blocks are out of order, as an engine's pool hands them out.
      this.consumerBlocks =
          IntStream.range(0, dNeeded).map(i -> 10 + (i * 7) % dNeeded).boxed().toList();
      this.producer = new byte[p][];
      for (int q = 0; q < p; q++) {
        KvLayout l = producerLayouts.get(q);
        producer[q] = new byte[(int) l.totalBytes()];
        for (int i = 0; i < producerBlocks.size(); i++) {
          fill(producer[q], l, producerBlocks.get(i), i * pTokens);
        }
      }
      this.consumer = new byte[d][];
      for (int r = 0; r < d; r++) {
        consumer[r] = new byte[(int) consumerLayouts.get(r).totalBytes()];
        java.util.Arrays.fill(consumer[r], (byte) 0x55);
      }
    }

    TransferPlanner.Request load() {
      return new TransferPlanner.Request(
          producerLayouts, consumerLayouts, producerBlocks, consumerBlocks, tokens, skip);
    }

    void apply(Map<TransferPlanner.RankPair, TransferPlanner.Pieces> plan) {
      plan.forEach(
          (pair, pieces) -> {
            for (TransferPlanner.Piece piece : pieces) {
              assertThat(piece.consumerRank()).isEqualTo(pair.consumerRank());
              assertThat(piece.producerRank()).isEqualTo(pair.producerRank());
              System.arraycopy(
                  producer[piece.producerRank()],
                  flat(producerLayouts.get(piece.producerRank()), piece.producerOffset()),
                  consumer[piece.consumerRank()],
                  flat(consumerLayouts.get(piece.consumerRank()), piece.consumerOffset()),
                  (int) piece.length());
            }
          });
    }

    /**
     * Plans producer blocks {@code [from, to)} with every pair that can staged, and applies the
     * plan as a consumer does: a staged pair's pieces into a staging array of the pair's staged
     * bytes, then its copies from there into place.
     */
    void applyStaged(TransferPlanner.Request load, int from, int to) {
      Map<TransferPlanner.RankPair, TransferPlanner.Pieces> plan =
          TransferPlanner.plan(load, from, to, (r, q) -> true);
      plan.forEach(
          (pair, pieces) -> {
            if (pieces.scatter().isEmpty()) {
              assertThat(TransferPlanner.stageable(load, pair.consumerRank(), pair.producerRank()))
                  .isFalse();
              apply(Map.of(pair, pieces));
              return;
            }
            int q = pair.producerRank();
            int r = pair.consumerRank();
            byte[] staging = new byte[(int) TransferPlanner.stagedBytes(load, r, q, from, to)];
            for (TransferPlanner.Piece piece : pieces) {
              System.arraycopy(
                  producer[q],
                  flat(producerLayouts.get(q), piece.producerOffset()),
                  staging,
                  (int) piece.consumerOffset(),
                  (int) piece.length());
            }
            TransferPlanner.Scatter scatter = pieces.scatter().get();
            for (int i = 0; i < scatter.copyCount(); i++) {
              for (int row = 0; row < scatter.rows(i); row++) {
                System.arraycopy(
                    staging,
                    (int) scatter.source(i) + row * scatter.sourcePitch(),
                    consumer[r],
                    flat(consumerLayouts.get(r), scatter.target(i)) + row * scatter.targetPitch(),
                    scatter.width());
              }
            }
          });
    }

    void checkConsumer() {
      int firstToken = load().firstBlock() * producerLayouts.get(0).tokensPerBlock();
      for (int r = 0; r < consumerLayouts.size(); r++) {
        KvLayout l = consumerLayouts.get(r);
        for (int token = 0; token < tokens; token++) {
          int block = consumerBlocks.get(token / l.tokensPerBlock());
          for (int layer = 0; layer < LAYERS; layer++) {
            for (int plane = 0; plane < PLANES; plane++) {
              for (int head = l.headStart(); head < l.headStart() + l.headCount(); head++) {
                long at = flat(l, l.offset(block, layer, plane, head, token % l.tokensPerBlock()));
                for (int b = 0; b < l.vectorBytes(); b++) {
                  byte expected =
                      token < firstToken ? (byte) 0x55 : value(layer, plane, head, token, b);
                  assertThat(consumer[r][(int) (at + b)])
                      .as(
                          "rank %d token %d layer %d plane %d head %d byte %d",
                          r, token, layer, plane, head, b)
                      .isEqualTo(expected);
                }
              }
            }
          }
        }
      }
    }

    /**
     * Where rank offset {@code rankOffset} of a rank of {@code l} lies in the test's one array per
     * rank, which holds the rank's regions back to back.
     */
    static int flat(KvLayout l, long rankOffset) {
      return Math.toIntExact(
          KvLayout.region(rankOffset) * l.regionBytes() + KvLayout.inRegion(rankOffset));
    }

    private void fill(byte[] memory, KvLayout l, int block, int firstToken) {
      for (int t = 0; t < l.tokensPerBlock(); t++) {
        for (int layer = 0; layer < LAYERS; layer++) {
          for (int plane = 0; plane < PLANES; plane++) {
            for (int head = l.headStart(); head < l.headStart() + l.headCount(); head++) {
              long at = flat(l, l.offset(block, layer, plane, head, t));
              for (int b = 0; b < l.vectorBytes(); b++) {
                memory[(int) (at + b)] = value(layer, plane, head, firstToken + t, b);
              }
            }
          }
        }
      }
    }

    /** A pseudo-random byte of its coordinates, so a misplaced byte is very likely noticed. */
    private static byte value(int layer, int plane, int head, int token, int b) {
      int h = (((token * 131 + layer) * 131 + plane) * 131 + head) * 131 + b;
      h ^= h >>> 7;
      h *= 0x9E3779B1;
      return (byte) (h >>> 24);
    }
  }
}
