package io.kvbridge.fake;

import io.kvbridge.tck.TransportConformanceTest;
import io.kvbridge.transfer.ForwardingTransport;
import io.kvbridge.transfer.Transport;

/**
 * A decorator built on {@link ForwardingTransport} that overrides nothing honours the transport
 * contract exactly as the transport it wraps: every call, prepared lists included, reaches the
 * fake, so the suite's checks of prepared lists (released, of an invalidated or reloaded peer, of
 * another agent) hold through it as they hold on the fake itself.
 */
class ForwardingTransportConformanceTest extends TransportConformanceTest {

  ForwardingTransportConformanceTest() {
    super(
        new FakeConnectorUnderTest() {
          @Override
          public Transport newTransport(String agentName) {
            return new ForwardingTransport(super.newTransport(agentName)) {};
          }
        });
  }
}
