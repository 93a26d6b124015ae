package io.kvbridge.runtime;

import io.kvbridge.spi.PeerStatus;
import io.kvbridge.transfer.MemoryKind;

/**
 * A producer this consumer completed a handshake with: how to reach its KV region and how its clock
 * relates to ours.
 *
 * @param engineId the producer's engine id
 * @param address where it answered the handshake
 * @param incarnation which start of the producer answered
 * @param agentName its transport agent name
 * @param blockCount the size of its pool; its block ids are below this
 * @param blockBytes the size of one block
 * @param regionAddress the base address of its KV region
 * @param deviceId the device of its KV region
 * @param memoryKind host or device memory
 * @param clock its clock relative to ours, healed by later exchanges
 */
record ProducerPeer(
    String engineId,
    String address,
    long incarnation,
    String agentName,
    int blockCount,
    int blockBytes,
    long regionAddress,
    int deviceId,
    MemoryKind memoryKind,
    ClockSync clock) {

  /** What the consumer's status shows of this producer: who it is and its clock now. */
  PeerStatus status() {
    ClockOffset offset = clock.current();
    return new PeerStatus(
        engineId, incarnation, address, offset.offsetNanos(), offset.uncertaintyNanos());
  }
}
