package io.kvbridge.fake;

import io.kvbridge.tck.TransportConformanceTest;
import io.kvbridge.transfer.Transport;

/** The fake transport honours the transport contract; each test runs on a fabric of its own. */
class FakeTransportConformanceTest extends TransportConformanceTest {

  private final FakeFabric fabric = new FakeFabric();

  @Override
  protected Transport newTransport(String agentName) {
    return fabric.join(agentName);
  }
}
