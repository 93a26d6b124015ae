package io.kvbridge.nixl;

import io.kvbridge.nixl.testing.RequiresNixl;
import io.kvbridge.tck.TransportConformanceTest;
import io.kvbridge.transfer.Transport;
import org.junit.jupiter.api.extension.ExtendWith;

/** The transport contract over real NIXL agents: UCX over loopback, host memory. */
@ExtendWith(RequiresNixl.class)
class NixlTransportConformanceTest extends TransportConformanceTest {

  @Override
  protected Transport newTransport(String agentName) {
    return NixlTransport.create(agentName, NixlOptions.defaults().withMemory(MemoryMode.DRAM));
  }

  /** UCX copies straight into a closed agent's still-living pages over cma and shared memory. */
  @Override
  protected boolean closingRevokesPeerAccess() {
    return false;
  }
}
