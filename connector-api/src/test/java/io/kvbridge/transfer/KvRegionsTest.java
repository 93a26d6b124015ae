package io.kvbridge.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.layout.KvLayout.MemoryOrder;
import io.kvbridge.layout.KvLayout.Placement;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** A rank's regions, addressed by rank offsets; refused when they do not fit the layout. */
class KvRegionsTest {

  private static final KvLayout PER_LAYER =
      new KvLayout("m@1", 2, 3, 2, 4, 0, 4, 4, 4, 6, MemoryOrder.BLOCK_MAJOR)
          .withMemory(MemoryOrder.BLOCK_MAJOR, Placement.PER_LAYER);

  @Test
  void aRankOffsetIsResolvedToItsRegionsAddress() {
    List<KvMemory> regions = regions(PER_LAYER, MemoryKind.DRAM, 0);
    KvRegions memory = new KvRegions(PER_LAYER, regions);

    long at = PER_LAYER.offset(5, 2, 1, 3, 2);

    assertThat(memory.regionAt(at)).isSameAs(regions.get(2));
    assertThat(memory.address(at)).isEqualTo(regions.get(2).address() + KvLayout.inRegion(at));
    assertThat(memory.descriptor(at, 8)).isEqualTo(new Descriptor(memory.address(at), 8, 0));
  }

  @Test
  void aBlockImageWrittenIsReadBackAndLandsInEveryLayersRegion() {
    KvRegions memory = new KvRegions(PER_LAYER, regions(PER_LAYER, MemoryKind.DRAM, 0));
    byte[] image = new byte[PER_LAYER.blockBytes()];
    new Random(7).nextBytes(image);

    memory.writeBlock(4, image);

    assertThat(memory.readBlock(4)).isEqualTo(image);
    byte[] vector = new byte[PER_LAYER.vectorBytes()];
    memory.read(PER_LAYER.offset(4, 2, 1, 3, 2), ByteBuffer.wrap(vector));
    int inImage = (int) PER_LAYER.offsetInBlock(2, 1, 3, 2);
    assertThat(vector)
        .isEqualTo(java.util.Arrays.copyOfRange(image, inImage, inImage + vector.length));
  }

  @Test
  void regionsThatDoNotFitTheLayoutAreRefusedNamingWhy() {
    List<KvMemory> two = regions(PER_LAYER, MemoryKind.DRAM, 0).subList(0, 2);
    assertThatThrownBy(() -> new KvRegions(PER_LAYER, two))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("a per_layer layout of 3 layers is 3 region(s), got 2");

    List<KvMemory> small = new ArrayList<>(regions(PER_LAYER, MemoryKind.DRAM, 0));
    small.set(
        1,
        new ByteArrayMemory(
            new byte[Math.toIntExact(PER_LAYER.regionBytes() - 1)], 1 << 20, MemoryKind.DRAM, 0));
    assertThatThrownBy(() -> new KvRegions(PER_LAYER, small))
        .hasMessageStartingWith(
            "KV region 1 of " + (PER_LAYER.regionBytes() - 1) + " bytes cannot hold ");

    List<KvMemory> mixed = new ArrayList<>(regions(PER_LAYER, MemoryKind.DRAM, 0));
    mixed.set(
        2,
        new ByteArrayMemory(
            new byte[Math.toIntExact(PER_LAYER.regionBytes())], 1 << 21, MemoryKind.VRAM, 0));
    assertThatThrownBy(() -> new KvRegions(PER_LAYER, mixed))
        .hasMessage("KV region 2 is on another device or of another kind");
  }

  private static List<KvMemory> regions(KvLayout layout, MemoryKind kind, int device) {
    List<KvMemory> out = new ArrayList<>();
    for (int i = 0; i < layout.regions(); i++) {
      out.add(
          new ByteArrayMemory(
              new byte[Math.toIntExact(layout.regionBytes())], 0x10_0000L * (i + 1), kind, device));
    }
    return out;
  }
}
