package io.kvbridge.spring.actuate;

import io.kvbridge.spi.Availability;
import io.kvbridge.spi.ConnectorStatus;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.TransportProvider;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * One connector's health, a member of {@link KvBridgeHealthContributor}: DOWN with the reason when
 * its provider cannot run on this machine; UP otherwise, with the details of its role's parts.
 *
 * <p>Thread-safe: reads the provider's availability and the connector's status on each call.
 */
final class ConnectorHealthIndicator extends AbstractHealthIndicator {

  private final TransportProvider provider;
  private final KvConnector connector;

  ConnectorHealthIndicator(TransportProvider provider, KvConnector connector) {
    super("kvbridge health check of engine " + connector.settings().engineId() + " failed");
    this.provider = provider;
    this.connector = connector;
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) {
    if (provider.availability(connector.settings().properties())
        instanceof Availability.Unavailable why) {
      builder.down().withDetail("type", provider.type()).withDetail("reason", why.reason());
      return;
    }
    ConnectorStatus status = connector.status();
    builder
        .up()
        .withDetail("type", status.type())
        .withDetail("role", status.role().toString())
        .withDetail("engineId", status.engineId());
    status.producer().ifPresent(p -> builder.withDetail("liveLeases", p.liveLeases()));
    status.consumer().ifPresent(c -> builder.withDetail("loadsInFlight", c.loadsInFlight()));
  }
}
