package io.kvbridge.fake;

import io.kvbridge.spi.TransportProvider;
import io.kvbridge.tck.PullProtocolConformanceTest;
import java.util.Map;
import java.util.UUID;

/** The pull protocol over the fake transport; each test runs on a fabric of its own. */
class FakePullProtocolConformanceTest extends PullProtocolConformanceTest {

  private final String fabric = "protocol-" + UUID.randomUUID();

  @Override
  protected TransportProvider provider() {
    return new FakeTransportProvider();
  }

  @Override
  protected Map<String, String> connectorProperties() {
    return Map.of(FakeTransportProvider.FABRIC, fabric);
  }
}
