package io.kvbridge.layout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.layout.KvLayout.MemoryOrder;
import io.kvbridge.layout.KvLayout.Placement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Where each placement puts a rank's slabs: the tensors engines allocate (vLLM's FlashAttention
 * tensor per layer, FlashInfer's, K and V per layer, an MLA latent per layer), written out by hand
 * from their shapes, and the rank offsets, regions and extents that follow.
 */
class KvLayoutPlacementTest {

  /**
   * 3 layers, K and V, heads 2 and 3 of 4, 4-token blocks, vectors of 3 two-byte elements, 5
   * blocks.
   */
  private static final KvLayout RANK =
      new KvLayout("m@1", 2, 3, 2, 4, 2, 2, 3, 4, 5, MemoryOrder.BLOCK_MAJOR);

  private static final int VECTOR = 6;
  private static final int SLAB = 2 * 4 * VECTOR;

  private static KvLayout placed(MemoryOrder order, Placement placement) {
    return RANK.withMemory(order, placement);
  }

  @Test
  void vllmsFlashAttentionTensorPerLayerIsTwoPlanesOfEveryBlock() {
    // [2, num_blocks, block_size, kv_heads, head_dim] per layer, NHD.
    KvLayout l = placed(MemoryOrder.BLOCK_MAJOR, Placement.PER_LAYER);

    assertThat(l.regions()).isEqualTo(3);
    assertThat(l.regionBytes()).isEqualTo(2L * 5 * SLAB);
    // layer 2, V, block 4, token 1, head 3: [1][4][1][1] of [2][5][4][2] vectors.
    long expected = (((1L * 5 + 4) * 4 + 1) * 2 + 1) * VECTOR;
    assertThat(l.offset(4, 2, 1, 3, 1)).isEqualTo(KvLayout.rankOffset(2, expected));
  }

  @Test
  void theHndPermutationKeepsAHeadsTokensTogether() {
    // [2, num_blocks, kv_heads, block_size, head_dim] per layer.
    KvLayout l = placed(MemoryOrder.HEAD_MAJOR, Placement.PER_LAYER);

    long expected = (((1L * 5 + 4) * 2 + 1) * 4 + 1) * VECTOR;
    assertThat(l.offset(4, 2, 1, 3, 1)).isEqualTo(KvLayout.rankOffset(2, expected));
  }

  @Test
  void flashInfersTensorPerLayerIsEveryBlocksTwoPlanes() {
    // [num_blocks, 2, block_size, kv_heads, head_dim] per layer.
    KvLayout l = placed(MemoryOrder.BLOCK_MAJOR, Placement.PER_LAYER_BLOCK_FIRST);

    assertThat(l.regions()).isEqualTo(3);
    long expected = (((4L * 2 + 1) * 4 + 1) * 2 + 1) * VECTOR;
    assertThat(l.offset(4, 2, 1, 3, 1)).isEqualTo(KvLayout.rankOffset(2, expected));
    assertThat(l.extentBytes()).isEqualTo(2 * SLAB);
    assertThat(l.extentsPerBlock()).isEqualTo(3);
  }

  @Test
  void separateKandVTensorsPerLayerAreARegionEach() {
    // K and V of layer l are regions 2l and 2l + 1: [num_blocks, block_size, kv_heads, head_dim].
    KvLayout l = placed(MemoryOrder.BLOCK_MAJOR, Placement.PER_LAYER_PLANE);

    assertThat(l.regions()).isEqualTo(6);
    assertThat(l.regionBytes()).isEqualTo(5L * SLAB);
    long expected = ((4L * 4 + 1) * 2 + 1) * VECTOR;
    assertThat(l.offset(4, 2, 1, 3, 1)).isEqualTo(KvLayout.rankOffset(5, expected));
  }

  @Test
  void anMlaLatentPerLayerIsOneVectorPerTokenInATensorPerLayer() {
    // [num_blocks, block_size, 576] per layer: one plane, one "head".
    KvLayout mla =
        KvModel.DEEPSEEK_V3
            .layout(64, 10, MemoryOrder.HEAD_MAJOR)
            .withMemory(MemoryOrder.HEAD_MAJOR, Placement.PER_LAYER_BLOCK_FIRST);

    assertThat(mla.regions()).isEqualTo(61);
    assertThat(mla.regionBytes()).isEqualTo(10L * 64 * 576 * 2);
    assertThat(mla.offset(7, 60, 0, 0, 63))
        .isEqualTo(KvLayout.rankOffset(60, (7L * 64 + 63) * 576 * 2));
  }

  @Test
  void aCrossLayerBlockIsTheBlockImageAndOneExtent() {
    KvLayout l = placed(MemoryOrder.HEAD_MAJOR, Placement.CROSS_LAYER);

    assertThat(l.regions()).isEqualTo(1);
    assertThat(l.extentBytes()).isEqualTo(l.blockBytes());
    assertThat(l.offset(3, 2, 1, 3, 1))
        .isEqualTo(3L * l.blockBytes() + l.offsetInBlock(2, 1, 3, 1));
  }

  @ParameterizedTest
  @EnumSource(Placement.class)
  void everyVectorOfEveryBlockHasItsOwnBytesInsideItsRegion(Placement placement) {
    for (MemoryOrder order : MemoryOrder.values()) {
      KvLayout l = placed(order, placement);
      Set<Long> starts = new HashSet<>();
      for (int block = 0; block < l.blockCount(); block++) {
        for (int layer = 0; layer < l.layers(); layer++) {
          for (int plane = 0; plane < l.planes(); plane++) {
            for (int head = 2; head < 4; head++) {
              for (int token = 0; token < 4; token++) {
                long at = l.offset(block, layer, plane, head, token);
                assertThat(KvLayout.region(at)).isBetween(0, l.regions() - 1);
                assertThat(KvLayout.inRegion(at) % VECTOR).isZero();
                assertThat(KvLayout.inRegion(at) + VECTOR).isLessThanOrEqualTo(l.regionBytes());
                starts.add(at);
              }
            }
          }
        }
      }
      // Every vector distinct and the regions exactly full: the placement is a bijection.
      assertThat(starts).hasSize(Math.toIntExact(l.regions() * l.regionBytes() / VECTOR));
    }
  }

  @ParameterizedTest
  @EnumSource(Placement.class)
  void regionsAreExtentsBackToBackAndEachBlocksExtentsAreItsImage(Placement placement) {
    KvLayout l = placed(MemoryOrder.BLOCK_MAJOR, placement);
    Set<Long> indices = new HashSet<>();
    for (int block = 0; block < l.blockCount(); block++) {
      long image = 0;
      for (int e = 0; e < l.extentsPerBlock(); e++) {
        long at = l.extentOffset(block, e);
        indices.add(l.extentIndex(at));
        // The image of a block is its extents in order: slab (layer, plane) at g × slab.
        int g = (int) (image / SLAB);
        assertThat(at).isEqualTo(l.slabOffset(block, g / 2, g % 2));
        image += l.extentBytes();
      }
      assertThat(image).isEqualTo(l.blockBytes());
    }
    assertThat(indices)
        .hasSize(Math.toIntExact(l.regions() * l.extentsPerRegion()))
        .allSatisfy(i -> assertThat(i).isBetween(0L, l.regions() * l.extentsPerRegion() - 1));
    assertThat(l.extentIndex(l.extentOffset(0, 0) + VECTOR)).isEqualTo(-1);
  }

  @Test
  void theUsedBytesOfAPartlyFilledBlockAreEachSlabsUsedVectorsInMemoryOrder() {
    KvLayout nhd = placed(MemoryOrder.BLOCK_MAJOR, Placement.PER_LAYER);
    KvLayout hnd = placed(MemoryOrder.HEAD_MAJOR, Placement.PER_LAYER_PLANE);
    List<long[]> nhdRanges = new ArrayList<>();
    List<long[]> hndRanges = new ArrayList<>();

    nhd.forEachUsedRange(3, 3, (at, length) -> nhdRanges.add(new long[] {at, length}));
    hnd.forEachUsedRange(3, 3, (at, length) -> hndRanges.add(new long[] {at, length}));

    // Token-major: one range of 3 tokens × 2 heads per slab; head-major: one per head and slab.
    assertThat(nhdRanges).hasSize(6);
    assertThat(nhdRanges.get(1)).containsExactly(nhd.slabOffset(3, 0, 1), 3L * 2 * VECTOR);
    assertThat(hndRanges).hasSize(12);
    assertThat(hndRanges.get(1))
        .containsExactly(hnd.slabOffset(3, 0, 0) + 4L * VECTOR, 3L * VECTOR);
  }

  @Test
  void aFullCrossLayerBlockIsOneUsedRange() {
    KvLayout l = placed(MemoryOrder.HEAD_MAJOR, Placement.CROSS_LAYER);
    List<long[]> ranges = new ArrayList<>();

    l.forEachUsedRange(2, 4, (at, length) -> ranges.add(new long[] {at, length}));

    assertThat(ranges).hasSize(1);
    assertThat(ranges.get(0)).containsExactly(2L * l.blockBytes(), (long) l.blockBytes());
  }

  @Test
  void aRegionOf16TiBOrMoreIsRefusedNamingThePlacementThatHelps() {
    assertThatThrownBy(
            () ->
                new KvLayout(
                    "m@1", 2, 64, 2, 8, 0, 8, 128, 64, 100_000_000, MemoryOrder.HEAD_MAJOR))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("16 TiB or more")
        .hasMessageContaining("a placement with more regions");
  }
}
