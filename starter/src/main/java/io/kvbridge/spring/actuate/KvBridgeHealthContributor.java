package io.kvbridge.spring.actuate;

import io.kvbridge.spi.KvConnector;
import io.kvbridge.spring.KvConnectors;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.HealthContributor;
import org.springframework.boot.health.contributor.HealthContributors;

/**
 * kvbridge's health ({@code kvbridge}): one indicator per live connector, named by its engine id,
 * so {@code /actuator/health/kvbridge/<engine-id>} shows one engine. Each is DOWN with the reason
 * when the selected connector type cannot run on this machine, and UP otherwise, with the
 * connector's type, role and engine id, its live leases (producers) and its loads in flight
 * (consumers).
 *
 * <p>Engines create and close connectors while the application runs, so the members are the
 * connectors live at each call, not those of start-up: before the first connector is created
 * kvbridge adds nothing to the health.
 *
 * <p>Thread-safe: reads {@link KvConnectors#all()} and each connector's status.
 */
public class KvBridgeHealthContributor implements CompositeHealthContributor {

  private final KvConnectors connectors;

  /** Reports on {@code connectors}. */
  public KvBridgeHealthContributor(KvConnectors connectors) {
    this.connectors = connectors;
  }

  @Override
  public @Nullable HealthContributor getContributor(String engineId) {
    return connectors.all().stream()
        .filter(connector -> connector.settings().engineId().equals(engineId))
        .findFirst()
        .map(this::indicator)
        .orElse(null);
  }

  @Override
  public Stream<HealthContributors.Entry> stream() {
    return connectors.all().stream()
        .map(
            connector ->
                new HealthContributors.Entry(
                    connector.settings().engineId(), indicator(connector)));
  }

  private ConnectorHealthIndicator indicator(KvConnector connector) {
    return new ConnectorHealthIndicator(connectors.provider(), connector);
  }
}
