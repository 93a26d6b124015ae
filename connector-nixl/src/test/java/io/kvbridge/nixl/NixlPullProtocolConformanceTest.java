package io.kvbridge.nixl;

import io.kvbridge.conformance.PullProtocolConformanceTest;
import io.kvbridge.nixl.testing.RequiresNixl;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.KvConnector;
import java.util.Map;
import org.junit.jupiter.api.extension.ExtendWith;

/** The pull protocol over real NIXL: two engines in one JVM, UCX over loopback, host memory. */
@ExtendWith(RequiresNixl.class)
class NixlPullProtocolConformanceTest extends PullProtocolConformanceTest {

  @Override
  protected KvConnector newConnector(ConnectorSettings settings) {
    return new NixlConnectorProvider().create(settings);
  }

  @Override
  protected String connectorType() {
    return NixlConnectorProvider.TYPE;
  }

  @Override
  protected Map<String, String> connectorProperties() {
    return Map.of(NixlOptions.MEMORY, "dram");
  }
}
