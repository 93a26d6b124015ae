package io.kvbridge.spi;

import io.kvbridge.lease.EndReason;
import io.kvbridge.net.DropReason;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The producer's part of a {@link ConnectorStatus}: the leases this engine holds for consumers and
 * the handshakes it answers.
 *
 * @param handshakeAddress where this engine answers handshakes; empty until its KV cache is
 *     registered
 * @param liveLeases leases held now
 * @param soonestExpiry time until the earliest live lease expires; empty when no lease is live
 * @param leasesGranted leases granted since start
 * @param leasesEnded leases ended since start, by reason; every reason is present, in declaration
 *     order
 * @param heartbeatsRenewed heartbeats that renewed a lease
 * @param heartbeatsIgnored heartbeats ignored: their lease was unknown or had ended
 * @param consumers engine ids of the consumers that completed a handshake with this engine, sorted
 * @param droppedConnections handshake connections closed before their conversation ended, by
 *     reason; every reason is present, in declaration order (zeros before the server starts)
 */
public record ProducerStatus(
    Optional<String> handshakeAddress,
    int liveLeases,
    Optional<Duration> soonestExpiry,
    long leasesGranted,
    Map<EndReason, Long> leasesEnded,
    long heartbeatsRenewed,
    long heartbeatsIgnored,
    List<String> consumers,
    Map<DropReason, Long> droppedConnections) {

  /** Copies the collections and fills in every end reason and every drop reason. */
  public ProducerStatus {
    leasesEnded = EnumCounts.complete(EndReason.class, leasesEnded);
    consumers = List.copyOf(consumers);
    droppedConnections = EnumCounts.complete(DropReason.class, droppedConnections);
  }
}
