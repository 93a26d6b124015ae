package io.kvbridge.fake;

import io.kvbridge.tck.PullProtocolConformanceTest;

/** The pull protocol over the fake transport; each test runs on a fabric of its own. */
class FakePullProtocolConformanceTest extends PullProtocolConformanceTest {

  FakePullProtocolConformanceTest() {
    super(new FakeConnectorUnderTest());
  }
}
