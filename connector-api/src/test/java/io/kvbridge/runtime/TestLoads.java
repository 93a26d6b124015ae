package io.kvbridge.runtime;

import io.kvbridge.integrity.ChecksumScheme;
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

  /** {@code prefill-0} handshaken in process, one DRAM rank {@code p0} at {@code base}. */
  static ProducerPeer oneRankProducer(KvLayout layout, long base) {
    return new ProducerPeer(
        "prefill-0",
        "local://prefill-0",
        1L,
        List.of(new ProducerPeer.Rank("p0", layout, base, 0, MemoryKind.DRAM)),
        null);
  }
}
