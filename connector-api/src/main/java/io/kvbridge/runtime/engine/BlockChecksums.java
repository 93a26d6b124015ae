package io.kvbridge.runtime.engine;

import io.kvbridge.integrity.ChecksumInput;
import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.transfer.KvMemory;
import java.util.ArrayList;
import java.util.List;

/**
 * The checksums P records of a lease's blocks at grant and D compares what it read with: of each
 * block, the bytes its used tokens occupy, in memory order.
 *
 * <p>Stateless.
 */
public final class BlockChecksums {

  private BlockChecksums() {}

  /**
   * The checksum of each block's used bytes in {@code memory}, laid out as {@code layout}: {@code
   * blocks} hold {@code tokens} tokens, every block full but perhaps the last.
   */
  public static List<Integer> of(
      ChecksumScheme scheme, KvLayout layout, KvMemory memory, List<Integer> blocks, int tokens) {
    List<Integer> out = new ArrayList<>(blocks.size());
    for (int i = 0; i < blocks.size(); i++) {
      int used = Math.min(layout.tokensPerBlock(), tokens - i * layout.tokensPerBlock());
      long base = (long) blocks.get(i) * layout.blockBytes();
      List<ChecksumInput.Range> ranges = new ArrayList<>();
      for (long[] range : usedRanges(layout, used)) {
        ranges.add(new ChecksumInput.Range(memory, base + range[0], range[1]));
      }
      out.add(scheme.checksum(ChecksumInput.of(ranges)));
    }
    return out;
  }

  /**
   * The used bytes of a block of {@code layout} holding {@code usedTokens} tokens, as ranges within
   * the block in memory order: the whole block when it is full. What a producer's checksum of the
   * block covers.
   */
  public static List<long[]> usedRanges(KvLayout layout, int usedTokens) {
    if (usedTokens == layout.tokensPerBlock()) {
      return List.of(new long[] {0, layout.blockBytes()});
    }
    List<long[]> ranges = new ArrayList<>();
    int vector = layout.vectorBytes();
    for (int layer = 0; layer < layout.layers(); layer++) {
      for (int plane = 0; plane < layout.planes(); plane++) {
        if (layout.order() == KvLayout.MemoryOrder.HEAD_MAJOR) {
          for (int h = layout.headStart(); h < layout.headStart() + layout.headCount(); h++) {
            ranges.add(
                new long[] {layout.offsetInBlock(layer, plane, h, 0), (long) usedTokens * vector});
          }
        } else {
          ranges.add(
              new long[] {
                layout.offsetInBlock(layer, plane, layout.headStart(), 0),
                (long) usedTokens * layout.headCount() * vector
              });
        }
      }
    }
    return ranges;
  }
}
