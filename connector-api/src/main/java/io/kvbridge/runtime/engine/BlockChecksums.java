package io.kvbridge.runtime.engine;

import io.kvbridge.integrity.ChecksumInput;
import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.transfer.KvRegions;
import java.util.ArrayList;
import java.util.List;

/**
 * The checksums P records of a lease's blocks at grant and D compares what it read with: of each
 * block, the bytes its used tokens occupy, in memory order, over the rank's regions.
 *
 * <p>Stateless.
 */
public final class BlockChecksums {

  private BlockChecksums() {}

  /**
   * The checksum of each block's used bytes in {@code memory}: {@code blocks} hold {@code tokens}
   * tokens, every block full but perhaps the last; the bytes are {@link
   * KvLayout#forEachUsedRange}'s, in its order.
   */
  public static List<Integer> of(
      ChecksumScheme scheme, KvRegions memory, List<Integer> blocks, int tokens) {
    return ofLayers(scheme, memory, blocks, tokens, 0, memory.layout().layers());
  }

  /**
   * {@link #of} of the layers {@code [fromLayer, toLayer)} alone: what a producer that streams a
   * request records of each block once those layers are computed.
   */
  public static List<Integer> ofLayers(
      ChecksumScheme scheme,
      KvRegions memory,
      List<Integer> blocks,
      int tokens,
      int fromLayer,
      int toLayer) {
    KvLayout layout = memory.layout();
    List<Integer> out = new ArrayList<>(blocks.size());
    for (int i = 0; i < blocks.size(); i++) {
      int used = Math.min(layout.tokensPerBlock(), tokens - i * layout.tokensPerBlock());
      List<ChecksumInput.Range> ranges = new ArrayList<>();
      layout.forEachUsedRange(
          blocks.get(i),
          used,
          fromLayer,
          toLayer,
          (at, length) -> ranges.add(ChecksumInput.Range.at(memory, at, length)));
      out.add(scheme.checksum(ChecksumInput.of(ranges)));
    }
    return out;
  }
}
