package io.kvbridge.spring;

import io.kvbridge.spi.Availability;
import io.kvbridge.spi.ConnectorProperties;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TransportProvider;
import java.util.List;

/** An application's own {@link KvConnectors}: a provider and a fixed list of connectors. */
public record StubKvConnectors(TransportProvider provider, List<KvConnector> all)
    implements KvConnectors {

  public StubKvConnectors(TransportProvider provider) {
    this(provider, List.of());
  }

  @Override
  public Availability availability() {
    return provider.availability(ConnectorProperties.EMPTY);
  }

  @Override
  public KvConnector create() {
    throw new UnsupportedOperationException("stub");
  }

  @Override
  public KvConnector create(String engineId, Role role) {
    throw new UnsupportedOperationException("stub");
  }

  @Override
  public KvConnector create(String engineId, Role role, int tpDegree) {
    throw new UnsupportedOperationException("stub");
  }
}
