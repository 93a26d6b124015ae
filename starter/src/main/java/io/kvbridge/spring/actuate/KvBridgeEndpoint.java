package io.kvbridge.spring.actuate;

import io.kvbridge.spi.Availability;
import io.kvbridge.spi.ConnectorStatus;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.TransportProvider;
import io.kvbridge.spring.KvConnectors;
import io.kvbridge.spring.events.PrefixIndexStatus;
import io.kvbridge.spring.events.PrefixIndexView;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The {@code kvbridge} management endpoint: the selected connector type, whether it can run here,
 * every live connector's {@link ConnectorStatus}, as it is, and, when the application keeps a
 * prefix index and declares a {@link PrefixIndexView}, that index's {@link PrefixIndexStatus}.
 *
 * <p>In JSON a role is written as configured ({@code producer}, {@code consumer}, {@code both});
 * counts by kind are keyed by constant name ({@code READ}, {@code WRONG_TOKEN}, {@code
 * FRAME_REFUSED}), every constant present; durations are ISO-8601 ({@code PT20S}); a part the
 * engine's role does not have, and an address or expiry not known yet, is {@code null}; so is
 * {@code prefixIndex} in an application without a prefix index. The prefix index's outcomes are
 * keyed by {@link io.kvbridge.events.PrefixIndex.Outcome} constant name ({@code APPLIED}, {@code
 * GAP}), every constant present.
 *
 * <p>Threads: {@link #kvbridge} may be called from any thread; each call reads the connectors and
 * the view afresh.
 */
@Endpoint(id = "kvbridge")
public class KvBridgeEndpoint {

  private final KvConnectors connectors;
  private final @Nullable PrefixIndexView prefixIndex;

  /** Describes {@code connectors}, in an application without a prefix index. */
  public KvBridgeEndpoint(KvConnectors connectors) {
    this.connectors = connectors;
    this.prefixIndex = null;
  }

  /** Describes {@code connectors} and the prefix index {@code prefixIndex} shows. */
  public KvBridgeEndpoint(KvConnectors connectors, PrefixIndexView prefixIndex) {
    this.connectors = connectors;
    this.prefixIndex = prefixIndex;
  }

  /** The current state of kvbridge in this application. */
  @ReadOperation
  public KvBridgeDescriptor kvbridge() {
    TransportProvider provider = connectors.provider();
    ProviderAvailability availability =
        connectors.availability() instanceof Availability.Unavailable why
            ? new ProviderAvailability(false, why.reason())
            : new ProviderAvailability(true, null);
    List<ConnectorStatus> statuses = connectors.all().stream().map(KvConnector::status).toList();
    return new KvBridgeDescriptor(
        provider.type(),
        availability,
        statuses,
        prefixIndex == null ? null : prefixIndex.prefixIndex());
  }

  /**
   * What the endpoint returns.
   *
   * @param connectorType the type selected by {@code kvbridge.connector.type}
   * @param availability whether that connector can run on this machine
   * @param connectors every live connector's status, in creation order
   * @param prefixIndex the application's prefix index, from its {@link PrefixIndexView}; {@code
   *     null} when it declares none
   */
  public record KvBridgeDescriptor(
      String connectorType,
      ProviderAvailability availability,
      List<ConnectorStatus> connectors,
      @Nullable PrefixIndexStatus prefixIndex)
      implements OperationResponseBody {}

  /**
   * Whether the selected connector can run here.
   *
   * @param available whether it can
   * @param reason why not, when it cannot
   */
  public record ProviderAvailability(boolean available, @Nullable String reason) {}
}
