package io.kvbridge.fake;

import io.kvbridge.conformance.PullProtocolConformanceTest;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.KvConnector;
import java.util.Map;
import java.util.UUID;

/** The pull protocol over the fake transport; each test runs on a fabric of its own. */
class FakePullProtocolConformanceTest extends PullProtocolConformanceTest {

  private final String fabric = "protocol-" + UUID.randomUUID();

  @Override
  protected KvConnector newConnector(ConnectorSettings settings) {
    return new FakeConnectorProvider().create(settings);
  }

  @Override
  protected String connectorType() {
    return FakeConnectorProvider.TYPE;
  }

  @Override
  protected Map<String, String> connectorProperties() {
    return Map.of(FakeConnectorProvider.FABRIC, fabric);
  }
}
