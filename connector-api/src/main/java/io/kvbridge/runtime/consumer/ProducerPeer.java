package io.kvbridge.runtime.consumer;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.spi.PeerStatus;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.MemoryKind;
import java.util.List;

/**
 * A producer this consumer completed a handshake with: how to reach each of its ranks' KV regions
 * and how its clock relates to ours.
 *
 * @param engineId the producer's engine id
 * @param address where it answered the handshake
 * @param incarnation which start of the producer answered
 * @param ranks its tensor-parallel ranks, by rank; rank 0's agent exchanges the protocol's
 *     notifications
 * @param clock its clock relative to ours, healed by later exchanges
 */
record ProducerPeer(
    String engineId, String address, long incarnation, List<Rank> ranks, ClockSync clock) {

  /** Copies the ranks. */
  ProducerPeer {
    ranks = List.copyOf(ranks);
  }

  /**
   * One rank of the producer.
   *
   * @param agentName its transport agent's name
   * @param layout its layout
   * @param regionAddresses the base addresses of its KV regions, in region order
   * @param deviceId the device of its KV regions
   * @param memoryKind host or device memory
   */
  record Rank(
      String agentName,
      KvLayout layout,
      List<Long> regionAddresses,
      int deviceId,
      MemoryKind memoryKind) {

    /** A descriptor of {@code length} bytes from rank offset {@code rankOffset} of this rank. */
    Descriptor descriptor(long rankOffset, long length) {
      return new Descriptor(
          regionAddresses.get(KvLayout.region(rankOffset)) + KvLayout.inRegion(rankOffset),
          length,
          deviceId);
    }
  }

  /** The lead rank's agent: where this consumer's notifications go. */
  String agentName() {
    return ranks.get(0).agentName();
  }

  /** The producer's pool size; its block ids are below this. */
  int blockCount() {
    return ranks.get(0).layout().blockCount();
  }

  /** Every rank's layout, by rank. */
  List<KvLayout> layouts() {
    return ranks.stream().map(Rank::layout).toList();
  }

  /** What the consumer's status shows of this producer: who it is and its clock now. */
  PeerStatus status() {
    ClockOffset offset = clock.current();
    return new PeerStatus(
        engineId, incarnation, address, offset.offsetNanos(), offset.uncertaintyNanos());
  }
}
