package io.kvbridge.runtime.consumer;

import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.integrity.ReadDigest;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.lease.LeaseToken;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.transfer.MemoryKind;
import java.util.List;
import java.util.Optional;

/** Loads and producers of one block and one rank, for the runtime's unit tests. */
final class TestLoads {

  private TestLoads() {}

  /** Request {@code d-1}'s load of lease {@code p-1}: block 0 of {@code prefill-0}, 4 tokens. */
  static Load oneBlock() {
    return oneBlock("d-1", "prefill-0", "p-1");
  }

  /**
   * Request {@code requestId}'s load of block 0 of {@code producer}, 4 tokens, under lease {@code
   * producerRequestId}.
   */
  static Load oneBlock(String requestId, String producer, String producerRequestId) {
    return new Load(
        requestId,
        new TransferParams(
            producer,
            1L,
            producerRequestId,
            List.of(0),
            4,
            TokenIds.of(new int[4]).digest(4),
            LeaseToken.random().value(),
            0L,
            Optional.empty(),
            ChecksumScheme.CRC32C,
            List.of(List.of(0))),
        0,
        0L,
        0L);
  }

  /**
   * Takes a load from CONFIRMING to {@code target} (AWAITING_ALLOCATION to AWAITING_REPLY) through
   * its transitions: confirmed by {@code peer}, lent {@code blocks}, read posted at {@code now}
   * with nothing to wait for, completion sent; the state reached ends at {@code deadline}.
   */
  static void advance(
      Load load,
      ProducerPeer peer,
      List<Integer> blocks,
      Load.State target,
      long deadline,
      long now) {
    load.confirmSent(peer, ReadDigest.fromBytes(new byte[32]), 0, now);
    load.confirmed(load.producerDeadline());
    if (target == Load.State.AWAITING_ALLOCATION) {
      return;
    }
    load.allocated(blocks);
    if (target == Load.State.READY) {
      return;
    }
    load.posted(
        new TransferPlanner.Request(
            peer.layouts(),
            peer.layouts(),
            load.params().blockIds(),
            blocks,
            load.params().tokens(),
            0),
        new Load.Posting(),
        now,
        deadline);
    if (target == Load.State.READING) {
      return;
    }
    load.completionSent(deadline);
    if (target != Load.State.AWAITING_REPLY) {
      throw new IllegalArgumentException("cannot advance a load to " + target);
    }
  }

  /** {@code prefill-0} handshaken in process, one DRAM rank {@code p0} at {@code base}. */
  static ProducerPeer oneRankProducer(KvLayout layout, long base) {
    return oneRankProducer(layout, List.of(base));
  }

  /** {@code prefill-0} of one rank of {@code layout}, its regions at {@code regions}. */
  static ProducerPeer oneRankProducer(KvLayout layout, List<Long> regions) {
    return new ProducerPeer(
        "prefill-0",
        "local://prefill-0",
        1L,
        List.of(new ProducerPeer.Rank("p0", layout, regions, 0, MemoryKind.DRAM)),
        new ClockSync(new ClockOffset(0, 0), 0));
  }
}
