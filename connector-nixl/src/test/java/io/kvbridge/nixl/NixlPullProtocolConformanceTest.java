package io.kvbridge.nixl;

import io.kvbridge.nixl.testing.RequiresNixl;
import io.kvbridge.spi.TransportProvider;
import io.kvbridge.tck.PullProtocolConformanceTest;
import java.util.Map;
import org.junit.jupiter.api.extension.ExtendWith;

/** The pull protocol over real NIXL: two engines in one JVM, UCX over loopback, host memory. */
@ExtendWith(RequiresNixl.class)
class NixlPullProtocolConformanceTest extends PullProtocolConformanceTest {

  @Override
  protected TransportProvider provider() {
    return new NixlTransportProvider();
  }

  @Override
  protected Map<String, String> connectorProperties() {
    return Map.of(NixlOptions.MEMORY, "dram");
  }
}
