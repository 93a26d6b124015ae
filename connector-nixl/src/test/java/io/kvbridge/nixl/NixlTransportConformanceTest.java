package io.kvbridge.nixl;

import io.kvbridge.nixl.testing.RequiresNixl;
import io.kvbridge.spi.ConnectorProperties;
import io.kvbridge.tck.TransportConformanceTest;
import io.kvbridge.transfer.Transport;
import java.util.Map;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The transport contract over real NIXL agents: UCX over loopback, host memory, each agent
 * capturing NIXL's per-transfer telemetry (the pull protocol's suite runs agents without it).
 */
@ExtendWith(RequiresNixl.class)
class NixlTransportConformanceTest extends TransportConformanceTest {

  private static final NixlOptions MEASURING =
      NixlOptions.fromProperties(
          ConnectorProperties.of(
              Map.of(NixlOptions.MEMORY, "dram", NixlOptions.TELEMETRY, "true")));

  @Override
  protected Transport newTransport(String agentName) {
    return NixlBackend.transport(agentName, MEASURING);
  }

  @Override
  protected boolean measuresTransfers() {
    return true;
  }

  /** UCX copies straight into a closed agent's still-living pages over cma and shared memory. */
  @Override
  protected boolean closingRevokesPeerAccess() {
    return false;
  }
}
