package io.kvbridge.fake;

import io.kvbridge.tck.TransportConformanceTest;

/** The fake transport honours the transport contract; each test runs on a fabric of its own. */
class FakeTransportConformanceTest extends TransportConformanceTest {

  FakeTransportConformanceTest() {
    super(new FakeConnectorUnderTest());
  }
}
