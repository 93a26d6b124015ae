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
    small.set(1, new Region(1 << 20, PER_LAYER.regionBytes() - 1, MemoryKind.DRAM, 0));
    assertThatThrownBy(() -> new KvRegions(PER_LAYER, small))
        .hasMessageStartingWith(
            "KV region 1 of " + (PER_LAYER.regionBytes() - 1) + " bytes cannot hold ");

    List<KvMemory> mixed = new ArrayList<>(regions(PER_LAYER, MemoryKind.DRAM, 0));
    mixed.set(2, new Region(1 << 21, PER_LAYER.regionBytes(), MemoryKind.VRAM, 0));
    assertThatThrownBy(() -> new KvRegions(PER_LAYER, mixed))
        .hasMessage("KV region 2 is on another device or of another kind");
  }

  private static List<KvMemory> regions(KvLayout layout, MemoryKind kind, int device) {
    List<KvMemory> out = new ArrayList<>();
    for (int i = 0; i < layout.regions(); i++) {
      out.add(new Region(0x10_0000L * (i + 1), layout.regionBytes(), kind, device));
    }
    return out;
  }

  /** Heap memory at a made-up address. */
  private static final class Region implements KvMemory {
    private final long address;
    private final byte[] bytes;
    private final MemoryKind kind;
    private final int device;

    Region(long address, long size, MemoryKind kind, int device) {
      this.address = address;
      this.bytes = new byte[Math.toIntExact(size)];
      this.kind = kind;
      this.device = device;
    }

    @Override
    public MemoryKind kind() {
      return kind;
    }

    @Override
    public int deviceId() {
      return device;
    }

    @Override
    public long address() {
      return address;
    }

    @Override
    public long sizeBytes() {
      return bytes.length;
    }

    @Override
    public void write(long offset, ByteBuffer src) {
      checkRange(offset, src.remaining());
      src.get(bytes, (int) offset, src.remaining());
    }

    @Override
    public void read(long offset, ByteBuffer dst) {
      checkRange(offset, dst.remaining());
      dst.put(bytes, (int) offset, dst.remaining());
    }

    @Override
    public void close() {}
  }
}
