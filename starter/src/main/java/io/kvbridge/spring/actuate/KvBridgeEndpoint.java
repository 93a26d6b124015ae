package io.kvbridge.spring.actuate;

import io.kvbridge.spi.Availability;
import io.kvbridge.spi.ConnectorStatus;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.TransportProvider;
import io.kvbridge.spring.KvConnectors;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The {@code kvbridge} management endpoint: the selected connector type, whether it can run here,
 * and every live connector's {@link ConnectorStatus}, as it is.
 *
 * <p>In JSON a role is written as configured ({@code producer}, {@code consumer}, {@code both});
 * counts by kind are keyed by constant name ({@code READ}, {@code WRONG_TOKEN}, {@code
 * FRAME_REFUSED}), every constant present; durations are ISO-8601 ({@code PT20S}); a part the
 * engine's role does not have, and an address or expiry not known yet, is {@code null}.
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
    List<ConnectorStatus> statuses = connectors.all().stream().map(KvConnector::status).toList();
    return new KvBridgeDescriptor(provider.type(), availability, statuses);
  }

  /**
   * What the endpoint returns.
   *
   * @param connectorType the type selected by {@code kvbridge.connector.type}
   * @param availability whether that connector can run on this machine
   * @param connectors every live connector's status, in creation order
   */
  public record KvBridgeDescriptor(
      String connectorType, ProviderAvailability availability, List<ConnectorStatus> connectors)
      implements OperationResponseBody {}

  /**
   * Whether the selected connector can run here.
   *
   * @param available whether it can
   * @param reason why not, when it cannot
   */
  public record ProviderAvailability(boolean available, @Nullable String reason) {}
}
