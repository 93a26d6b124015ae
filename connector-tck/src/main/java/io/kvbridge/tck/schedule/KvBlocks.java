package io.kvbridge.tck.schedule;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.transfer.KvMemory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Blocks of a rank's KV memory, by their index in its layout: a whole block read or written, and
 * which of a block's tokens and bytes a prompt uses.
 */
final class KvBlocks {

  private KvBlocks() {}

  static byte[] read(KvMemory memory, KvLayout layout, int block) {
    byte[] bytes = new byte[layout.blockBytes()];
    memory.read((long) block * layout.blockBytes(), ByteBuffer.wrap(bytes));
    return bytes;
  }

  static void write(KvMemory memory, KvLayout layout, int block, byte[] bytes) {
    memory.write((long) block * layout.blockBytes(), ByteBuffer.wrap(bytes));
  }

  /** The tokens of block {@code index} of a prompt of {@code tokens} in blocks of {@code size}. */
  static int usedTokens(int index, int size, int tokens) {
    return Math.max(0, Math.min(size, tokens - index * size));
  }

  /**
   * The used bytes of a block of {@code layout} holding {@code usedTokens} tokens, as (offset,
   * length) ranges in memory order: what a producer's checksum of the block covers.
   */
  static List<long[]> usedRanges(KvLayout layout, int usedTokens) {
    if (usedTokens == layout.tokensPerBlock()) {
      return List.of(new long[] {0, layout.blockBytes()});
    }
    List<long[]> ranges = new ArrayList<>();
    for (int layer = 0; layer < layout.layers(); layer++) {
      for (int plane = 0; plane < layout.planes(); plane++) {
        if (layout.order() == KvLayout.MemoryOrder.HEAD_MAJOR) {
          for (int h = layout.headStart(); h < layout.headStart() + layout.headCount(); h++) {
            ranges.add(
                new long[] {
                  layout.offset(0, layer, plane, h, 0), (long) usedTokens * layout.vectorBytes()
                });
          }
        } else {
          ranges.add(
              new long[] {
                layout.offset(0, layer, plane, layout.headStart(), 0),
                (long) usedTokens * layout.headCount() * layout.vectorBytes()
              });
        }
      }
    }
    return ranges;
  }
}
