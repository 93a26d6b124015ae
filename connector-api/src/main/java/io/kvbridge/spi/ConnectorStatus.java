package io.kvbridge.spi;

import io.kvbridge.lease.EndReason;
import io.kvbridge.observe.RejectedInput;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A point-in-time view of a connector, for health checks and the management endpoint.
 *
 * @param type the connector type
 * @param engineId this engine's id
 * @param role this engine's role
 * @param handshakeAddress where this engine answers handshakes, once its KV cache is registered
 * @param liveLeases leases P holds now
 * @param soonestExpiry time until the earliest live lease expires
 * @param leasesGranted leases granted since start
 * @param leasesEnded leases ended since start, by reason
 * @param rejected untrusted inputs refused since start, by kind
 * @param knownPeers engine ids this engine completed a handshake with
 * @param loadsInFlight consumer loads started and not yet finished or failed
 * @param readsCompleted consumer reads validated by the producer
 * @param bytesRead bytes of validated reads
 * @param loadsFailed consumer loads that failed
 * @param heartbeatsRenewed heartbeats that renewed a lease on this producer
 * @param heartbeatsIgnored heartbeats ignored on this producer (unknown or ended leases)
 * @param renewalsConfirmed lease renewals producers confirmed to this consumer
 */
public record ConnectorStatus(
    String type,
    String engineId,
    Role role,
    Optional<String> handshakeAddress,
    int liveLeases,
    Optional<Duration> soonestExpiry,
    long leasesGranted,
    Map<EndReason, Long> leasesEnded,
    Map<RejectedInput, Long> rejected,
    List<String> knownPeers,
    int loadsInFlight,
    long readsCompleted,
    long bytesRead,
    long loadsFailed,
    long heartbeatsRenewed,
    long heartbeatsIgnored,
    long renewalsConfirmed) {

  /** Copies the collections. */
  public ConnectorStatus {
    leasesEnded = Map.copyOf(leasesEnded);
    rejected = Map.copyOf(rejected);
    knownPeers = List.copyOf(knownPeers);
  }
}
