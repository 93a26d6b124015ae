package io.kvbridge.spring.actuate;

import io.kvbridge.spi.Availability;
import io.kvbridge.spi.ConnectorStatus;
import io.kvbridge.spi.ConsumerStatus;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.ProducerStatus;
import io.kvbridge.spi.TransportProvider;
import io.kvbridge.spring.KvConnectors;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * kvbridge's health: DOWN with the reason when the selected connector cannot run on this machine;
 * UP otherwise, with each live connector's type, role, engine id, live leases and loads in flight.
 */
public class KvBridgeHealthIndicator extends AbstractHealthIndicator {

  private final KvConnectors connectors;

  /** Reports on {@code connectors}. */
  public KvBridgeHealthIndicator(KvConnectors connectors) {
    super("kvbridge health check failed");
    this.connectors = connectors;
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) {
    TransportProvider provider = connectors.provider();
    builder.withDetail("type", provider.type());
    if (provider.availability() instanceof Availability.Unavailable why) {
      builder.down().withDetail("reason", why.reason());
      return;
    }
    Map<String, Object> byEngine = new LinkedHashMap<>();
    for (KvConnector connector : connectors.all()) {
      ConnectorStatus status = connector.status();
      Map<String, Object> details = new LinkedHashMap<>();
      details.put("type", status.type());
      details.put("role", status.role().toString());
      details.put("engineId", status.engineId());
      details.put("liveLeases", status.producer().map(ProducerStatus::liveLeases).orElse(0));
      details.put("loadsInFlight", status.consumer().map(ConsumerStatus::loadsInFlight).orElse(0));
      byEngine.put(status.engineId(), details);
    }
    builder.up().withDetail("connectors", byEngine);
  }
}
