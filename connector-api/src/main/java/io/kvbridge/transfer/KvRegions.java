package io.kvbridge.transfer;

import io.kvbridge.layout.KvLayout;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One rank's KV memory: the regions its {@link KvLayout} places slabs in (one, one per layer, or
 * one per layer and plane), addressed by the layout's <em>rank offsets</em> ({@link
 * KvLayout#offset}: the region's index in the high bits, the offset inside it in the low ones).
 * Every region is of one kind and on one device, and holds at least {@link KvLayout#regionBytes()}.
 *
 * <p>Threads: immutable; copies follow {@link KvMemory}'s rules for each region.
 */
public final class KvRegions {

  private final KvLayout layout;
  private final List<KvMemory> regions;

  /**
   * The regions of a rank of {@code layout}, in region order.
   *
   * @throws IllegalArgumentException naming what is wrong, as {@link #problem} does
   */
  public KvRegions(KvLayout layout, List<KvMemory> regions) {
    this.layout = Objects.requireNonNull(layout, "layout");
    this.regions = List.copyOf(regions);
    problem(layout, this.regions)
        .ifPresent(
            why -> {
              throw new IllegalArgumentException(why);
            });
  }

  /**
   * Why {@code regions} cannot hold a rank of {@code layout}, if they cannot: the count differs
   * from {@link KvLayout#regions()}, a region is smaller than {@link KvLayout#regionBytes()}, or
   * the regions are of different kinds or devices.
   */
  public static Optional<String> problem(KvLayout layout, List<KvMemory> regions) {
    if (regions.size() != layout.regions()) {
      return Optional.of(
          "a "
              + layout.placement().name().toLowerCase(java.util.Locale.ROOT)
              + " layout of "
              + layout.layers()
              + " layers is "
              + layout.regions()
              + " region(s), got "
              + regions.size());
    }
    KvMemory first = regions.get(0);
    for (int i = 0; i < regions.size(); i++) {
      KvMemory region = regions.get(i);
      if (region.sizeBytes() < layout.regionBytes()) {
        return Optional.of(
            "KV region "
                + i
                + " of "
                + region.sizeBytes()
                + " bytes cannot hold "
                + layout.regionBytes()
                + " ("
                + layout.blockCount()
                + " blocks of "
                + layout.blockBytes()
                + " bytes in "
                + layout.regions()
                + " region(s))");
      }
      if (region.kind() != first.kind() || region.deviceId() != first.deviceId()) {
        return Optional.of("KV region " + i + " is on another device or of another kind");
      }
    }
    return Optional.empty();
  }

  public KvLayout layout() {
    return layout;
  }

  /** The regions, in region order. */
  public List<KvMemory> regions() {
    return regions;
  }

  /** The regions' kind. */
  public MemoryKind kind() {
    return regions.get(0).kind();
  }

  /** The regions' device. */
  public int deviceId() {
    return regions.get(0).deviceId();
  }

  /** The region rank offset {@code rankOffset} lies in. */
  public KvMemory regionAt(long rankOffset) {
    return regions.get(KvLayout.region(rankOffset));
  }

  /** The address descriptors use for rank offset {@code rankOffset}. */
  public long address(long rankOffset) {
    return regionAt(rankOffset).address() + KvLayout.inRegion(rankOffset);
  }

  /** A descriptor of {@code length} bytes from rank offset {@code rankOffset}. */
  public Descriptor descriptor(long rankOffset, long length) {
    return new Descriptor(address(rankOffset), length, deviceId());
  }

  /**
   * Copies block {@code block}'s image ({@link KvLayout#offsetInBlock}: its slabs in (layer, plane)
   * order, {@link KvLayout#blockBytes()} in all) from {@code image} into its extents.
   */
  public void writeBlock(int block, byte[] image) {
    int extent = layout.extentBytes();
    for (int e = 0; e < layout.extentsPerBlock(); e++) {
      write(layout.extentOffset(block, e), ByteBuffer.wrap(image, e * extent, extent));
    }
  }

  /** Gathers block {@code block}'s image ({@link #writeBlock}'s form) from its extents. */
  public byte[] readBlock(int block) {
    byte[] image = new byte[layout.blockBytes()];
    int extent = layout.extentBytes();
    for (int e = 0; e < layout.extentsPerBlock(); e++) {
      read(layout.extentOffset(block, e), ByteBuffer.wrap(image, e * extent, extent));
    }
    return image;
  }

  /** Copies {@code src.remaining()} bytes to rank offset {@code rankOffset}, within one region. */
  public void write(long rankOffset, ByteBuffer src) {
    regionAt(rankOffset).write(KvLayout.inRegion(rankOffset), src);
  }

  /**
   * Copies {@code dst.remaining()} bytes from rank offset {@code rankOffset}, within one region.
   */
  public void read(long rankOffset, ByteBuffer dst) {
    regionAt(rankOffset).read(KvLayout.inRegion(rankOffset), dst);
  }
}
