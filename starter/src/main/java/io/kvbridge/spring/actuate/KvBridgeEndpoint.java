package io.kvbridge.spring.actuate;

import io.kvbridge.lease.EndReason;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.spi.Availability;
import io.kvbridge.spi.ConnectorStatus;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.TransportProvider;
import io.kvbridge.spring.KvConnectors;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The {@code kvbridge} management endpoint: the selected connector type, whether it can run here,
 * and a snapshot of every live connector's leases, transfers and refused inputs.
 */
@Endpoint(id = "kvbridge")
public class KvBridgeEndpoint {

  private final KvConnectors connectors;

  /** Describes {@code connectors}. */
  public KvBridgeEndpoint(KvConnectors connectors) {
    this.connectors = connectors;
  }

  /** The current state of kvbridge in this application. */
  @ReadOperation
  public KvBridgeDescriptor kvbridge() {
    TransportProvider provider = connectors.provider();
    ProviderAvailability availability =
        connectors.availability() instanceof Availability.Unavailable why
            ? new ProviderAvailability(false, why.reason())
            : new ProviderAvailability(true, null);
    List<ConnectorDescriptor> described =
        connectors.all().stream().map(KvConnector::status).map(ConnectorDescriptor::of).toList();
    return new KvBridgeDescriptor(provider.type(), availability, described);
  }

  /**
   * What the endpoint returns.
   *
   * @param connectorType the type selected by {@code kvbridge.connector.type}
   * @param availability whether that connector can run on this machine
   * @param connectors every live connector, in creation order
   */
  public record KvBridgeDescriptor(
      String connectorType, ProviderAvailability availability, List<ConnectorDescriptor> connectors)
      implements OperationResponseBody {}

  /**
   * Whether the selected connector can run here.
   *
   * @param available whether it can
   * @param reason why not, when it cannot
   */
  public record ProviderAvailability(boolean available, @Nullable String reason) {}

  /**
   * One connector's state.
   *
   * @param engineId the engine's id
   * @param role {@code producer}, {@code consumer} or {@code both}
   * @param handshakeAddress where the engine answers handshakes, once its KV cache is registered
   * @param liveLeases leases held now
   * @param soonestExpiry time until the earliest live lease expires (ISO-8601), if any
   * @param leasesGranted leases granted since start
   * @param leasesEnded leases ended since start, by reason ({@code READ}, {@code EXPIRED}, {@code
   *     REVOKED})
   * @param rejected untrusted inputs refused since start, by kind
   * @param knownPeers engine ids this engine completed a handshake with
   * @param loadsInFlight loads started and not yet finished or failed
   * @param readsCompleted reads validated by their producer
   * @param bytesRead bytes of validated reads
   * @param loadsFailed loads that failed
   * @param heartbeatsRenewed heartbeats that renewed a lease here
   * @param heartbeatsIgnored heartbeats ignored here (unknown or ended leases)
   */
  public record ConnectorDescriptor(
      String engineId,
      String role,
      @Nullable String handshakeAddress,
      int liveLeases,
      @Nullable String soonestExpiry,
      long leasesGranted,
      Map<String, Long> leasesEnded,
      Map<String, Long> rejected,
      List<String> knownPeers,
      int loadsInFlight,
      long readsCompleted,
      long bytesRead,
      long loadsFailed,
      long heartbeatsRenewed,
      long heartbeatsIgnored) {

    static ConnectorDescriptor of(ConnectorStatus status) {
      return new ConnectorDescriptor(
          status.engineId(),
          status.role().name().toLowerCase(Locale.ROOT),
          status.handshakeAddress().orElse(null),
          status.liveLeases(),
          status.soonestExpiry().map(Duration::toString).orElse(null),
          status.leasesGranted(),
          byName(EndReason.values(), status.leasesEnded()),
          byName(RejectedInput.values(), status.rejected()),
          status.knownPeers(),
          status.loadsInFlight(),
          status.readsCompleted(),
          status.bytesRead(),
          status.loadsFailed(),
          status.heartbeatsRenewed(),
          status.heartbeatsIgnored());
    }

    /** Every constant in declaration order, zero where the status has no count. */
    private static <E extends Enum<E>> Map<String, Long> byName(E[] keys, Map<E, Long> counts) {
      Map<String, Long> out = new LinkedHashMap<>();
      for (E key : keys) {
        out.put(key.name(), counts.getOrDefault(key, 0L));
      }
      return out;
    }
  }
}
