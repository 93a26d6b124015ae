package io.kvbridge.sample.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.KvRegions;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class BlockPoolTest {

  private static final KvLayout LAYOUT = KvLayout.opaque("test", 4, 16, 8);

  private final BlockPool pool = new BlockPool(List.of(regions(LAYOUT)));

  /** Heap memory for every region of a rank of {@code layout}. */
  static KvRegions regions(KvLayout layout) {
    List<KvMemory> regions = new ArrayList<>();
    for (int i = 0; i < layout.regions(); i++) {
      regions.add(new HeapKvMemory((int) layout.regionBytes()));
    }
    return new KvRegions(layout, regions);
  }

  @Test
  void allocatesDistinctBlocksAndCountsThemHeld() {
    List<Integer> first = pool.tryAllocate(3).orElseThrow();
    List<Integer> second = pool.tryAllocate(5).orElseThrow();

    List<Integer> all = new ArrayList<>(first);
    all.addAll(second);
    assertThat(new HashSet<>(all)).hasSize(8);
    assertThat(all).allMatch(id -> id >= 0 && id < 8);
    assertThat(pool.heldBlocks()).isEqualTo(8);
    assertThat(pool.freeBlocks()).isZero();
  }

  @Test
  void refusesToAllocateMoreThanIsFree() {
    pool.tryAllocate(6).orElseThrow();

    assertThat(pool.tryAllocate(3)).isEmpty();
    assertThat(pool.heldBlocks()).isEqualTo(6);
  }

  @Test
  void freedBlocksCanBeAllocatedAgain() {
    List<Integer> blocks = pool.tryAllocate(8).orElseThrow();

    pool.free(blocks);

    assertThat(pool.heldBlocks()).isZero();
    assertThat(pool.tryAllocate(8)).isPresent();
  }

  @Test
  void freeingABlockTwiceIsDetected() {
    List<Integer> blocks = pool.tryAllocate(2).orElseThrow();
    pool.free(blocks);

    assertThatThrownBy(() -> pool.free(blocks))
        .isInstanceOf(DoubleFreeException.class)
        .hasMessageContaining("block " + blocks.get(0));
  }

  @Test
  void aFailedFreeFreesNothing() {
    List<Integer> held = pool.tryAllocate(2).orElseThrow();
    List<Integer> notHeld = pool.tryAllocate(1).orElseThrow();
    pool.free(notHeld);

    List<Integer> mixed = List.of(held.get(0), held.get(1), notHeld.get(0));
    assertThatThrownBy(() -> pool.free(mixed)).isInstanceOf(DoubleFreeException.class);
    assertThat(pool.heldBlocks()).isEqualTo(2);
  }

  @Test
  void aBlockNamedTwiceInOneFreeIsDetected() {
    List<Integer> blocks = pool.tryAllocate(1).orElseThrow();

    assertThatThrownBy(() -> pool.free(List.of(blocks.get(0), blocks.get(0))))
        .isInstanceOf(DoubleFreeException.class);
    assertThat(pool.heldBlocks()).isEqualTo(1);
  }

  @Test
  void freeingABlockOutsideThePoolIsDetected() {
    assertThatThrownBy(() -> pool.free(List.of(8)))
        .isInstanceOf(DoubleFreeException.class)
        .hasMessageContaining("outside the pool");
  }

  @Test
  void tokensAreReadBackInTokenOrderAcrossBlocks() {
    List<Integer> blocks = pool.tryAllocate(3).orElseThrow();
    int bytesPerToken = pool.bytesPerToken();
    byte[] kv = new byte[10 * bytesPerToken];
    for (int token = 0; token < 10; token++) {
      Arrays.fill(kv, token * bytesPerToken, (token + 1) * bytesPerToken, (byte) token);
    }

    pool.writeTokens(blocks, 0, 10, kv);

    assertThat(pool.readTokens(blocks, 10)).isEqualTo(kv);
  }

  @ParameterizedTest(name = "TP {0}, {1}, {2}")
  @MethodSource("ranksAndOrders")
  void eachRankHoldsItsHeadsVectorsWhereItsLayoutPutsThem(
      int tp, KvLayout.MemoryOrder order, KvLayout.Placement placement) {
    KvLayout model = ToyModel.layout(4, 8, order).withMemory(order, placement);
    List<KvLayout> ranks = new ArrayList<>();
    List<KvRegions> memories = new ArrayList<>();
    for (int r = 0; r < tp; r++) {
      ranks.add(model.forRank(r, tp));
      memories.add(regions(ranks.get(r)));
    }
    BlockPool split = new BlockPool(memories);
    List<Integer> blocks = split.tryAllocate(3).orElseThrow();
    byte[] kv = new byte[10 * split.bytesPerToken()];
    new Random(tp).nextBytes(kv);

    split.writeTokens(blocks, 0, 10, kv);

    int vector = model.vectorBytes();
    for (int token = 0; token < 10; token++) {
      for (int layer = 0; layer < model.layers(); layer++) {
        for (int plane = 0; plane < 2; plane++) {
          for (int head = 0; head < model.kvHeads(); head++) {
            int r = head / (model.kvHeads() / tp);
            KvLayout rank = ranks.get(r);
            long at = rank.offset(blocks.get(token / 4), layer, plane, head, token % 4);
            int inToken = ((layer * 2 + plane) * model.kvHeads() + head) * vector;
            byte[] held = new byte[vector];
            memories.get(r).read(at, ByteBuffer.wrap(held));
            assertThat(held)
                .as("token %d, layer %d, plane %d, head %d", token, layer, plane, head)
                .isEqualTo(
                    Arrays.copyOfRange(
                        kv,
                        token * split.bytesPerToken() + inToken,
                        token * split.bytesPerToken() + inToken + vector));
          }
        }
      }
    }
    assertThat(split.readTokens(blocks, 10)).isEqualTo(kv);
  }

  static Stream<Arguments> ranksAndOrders() {
    return Stream.of(1, 2, 4)
        .flatMap(
            tp ->
                Arrays.stream(KvLayout.MemoryOrder.values())
                    .flatMap(
                        o ->
                            Arrays.stream(KvLayout.Placement.values())
                                .map(p -> Arguments.of(tp, o, p))));
  }

  @Test
  void writingSomeTokensOfABlockLeavesItsOtherSlotsAlone() {
    KvLayout model = ToyModel.layout(4, 8, KvLayout.MemoryOrder.HEAD_MAJOR);
    BlockPool one = new BlockPool(List.of(regions(model)));
    List<Integer> blocks = one.tryAllocate(2).orElseThrow();
    byte[] first = new byte[5 * one.bytesPerToken()];
    byte[] rest = new byte[3 * one.bytesPerToken()];
    new Random(1).nextBytes(first);
    new Random(2).nextBytes(rest);

    one.writeTokens(blocks, 0, 5, first);
    one.writeTokens(blocks, 5, 8, rest);

    byte[] both = Arrays.copyOf(first, first.length + rest.length);
    System.arraycopy(rest, 0, both, first.length, rest.length);
    assertThat(one.readTokens(blocks, 8)).isEqualTo(both);
  }

  @Test
  void copiedBlocksHoldTheSameKvOnEveryRank() {
    KvLayout model =
        ToyModel.layout(4, 8, KvLayout.MemoryOrder.BLOCK_MAJOR)
            .withMemory(KvLayout.MemoryOrder.BLOCK_MAJOR, KvLayout.Placement.PER_LAYER);
    BlockPool split =
        new BlockPool(List.of(regions(model.forRank(0, 2)), regions(model.forRank(1, 2))));
    List<Integer> from = split.tryAllocate(2).orElseThrow();
    List<Integer> to = split.tryAllocate(2).orElseThrow();
    byte[] kv = new byte[8 * split.bytesPerToken()];
    new Random(3).nextBytes(kv);
    split.writeTokens(from, 0, 8, kv);

    split.copyBlocks(from, to);

    assertThat(split.readTokens(to, 8)).isEqualTo(kv);
  }

  @Test
  void ranksThatLeaveAHeadUnheldAreRefused() {
    KvLayout model = ToyModel.layout(4, 8, KvLayout.MemoryOrder.HEAD_MAJOR);
    KvLayout half = model.forRank(0, 2);

    assertThatThrownBy(() -> new BlockPool(List.of(regions(half), regions(half))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("the ranks hold 2 of the model's 4 KV heads");
  }
}
