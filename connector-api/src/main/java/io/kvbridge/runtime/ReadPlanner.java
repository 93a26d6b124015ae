package io.kvbridge.runtime;

import io.kvbridge.spi.KvLayout;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns a verified load into the descriptor lists of one READ: producer block {@code
 * params.blockIds()[i]} lands in local block {@code localBlocks[i]}, each block {@code blockBytes}
 * long at {@code region + id × blockBytes}. Runs of blocks that are consecutive on both sides
 * become one descriptor, so a request whose blocks were allocated in order moves as one piece.
 *
 * <p>It derives descriptors only from what the consumer verified: block ids P will check against
 * the lease's read digest, the block size and region from P's handshake, and this engine's own
 * layout. Stateless.
 */
final class ReadPlanner {

  private ReadPlanner() {}

  /** The pair of lists, local first, that reads {@code remoteBlocks} into {@code localBlocks}. */
  static Plan plan(
      KvMemory local,
      KvLayout localLayout,
      List<Integer> localBlocks,
      ProducerPeer peer,
      List<Integer> remoteBlocks) {
    long blockBytes = localLayout.blockBytes();
    List<Descriptor> localPieces = new ArrayList<>();
    List<Descriptor> remotePieces = new ArrayList<>();
    int i = 0;
    while (i < remoteBlocks.size()) {
      int run = 1;
      while (i + run < remoteBlocks.size()
          && localBlocks.get(i + run) == localBlocks.get(i) + run
          && remoteBlocks.get(i + run) == remoteBlocks.get(i) + run) {
        run++;
      }
      localPieces.add(
          new Descriptor(
              local.address() + localBlocks.get(i) * blockBytes,
              run * blockBytes,
              local.deviceId()));
      remotePieces.add(
          new Descriptor(
              peer.regionAddress() + remoteBlocks.get(i) * (long) peer.blockBytes(),
              run * blockBytes,
              peer.deviceId()));
      i += run;
    }
    return new Plan(
        new DescriptorList(local.kind(), localPieces),
        new DescriptorList(peer.memoryKind(), remotePieces));
  }

  /**
   * One READ's descriptor lists, paired piece by piece.
   *
   * @param local where the bytes land
   * @param remote where they come from
   */
  record Plan(DescriptorList local, DescriptorList remote) {}
}
