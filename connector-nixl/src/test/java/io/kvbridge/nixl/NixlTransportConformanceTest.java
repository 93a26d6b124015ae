package io.kvbridge.nixl;

import io.kvbridge.nixl.testing.RequiresNixl;
import io.kvbridge.tck.TransportConformanceTest;
import java.util.Map;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The transport contract over real NIXL agents: UCX over loopback, host memory, each agent
 * capturing NIXL's per-transfer telemetry (the pull protocol's suite runs agents without it).
 */
@ExtendWith(RequiresNixl.class)
class NixlTransportConformanceTest extends TransportConformanceTest {

  NixlTransportConformanceTest() {
    super(
        new NixlConnectorUnderTest(
            Map.of(NixlOptions.MEMORY, "dram", NixlOptions.TELEMETRY, "true")));
  }
}
