package io.kvbridge.spring;

import io.kvbridge.protocol.PullConnector;
import io.kvbridge.spi.Availability;
import io.kvbridge.spi.ConnectorProvider;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.KvConnector;

/** Test provider of type {@code loopback}: the pull protocol over a {@link LoopbackTransport}. */
public final class LoopbackConnectorProvider implements ConnectorProvider {

  /** The type name tests select with {@code kvbridge.connector.type}. */
  public static final String TYPE = "loopback";

  @Override
  public String type() {
    return TYPE;
  }

  @Override
  public Availability availability() {
    return Availability.available();
  }

  @Override
  public KvConnector create(ConnectorSettings settings) {
    return new PullConnector(settings, new LoopbackTransport("agent-" + settings.engineId()));
  }
}
