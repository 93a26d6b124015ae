package io.kvbridge.fake;

import io.kvbridge.spi.TransportProvider;
import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.transfer.Transport;
import java.util.Map;
import java.util.UUID;

/**
 * The fake connector as the kit's suites run it. Engines started through the provider join a fabric
 * named for this object alone; agents the suites create directly join the fabric given, a fresh
 * anonymous one unless a variant says otherwise (synchronous copies, a shared directory). The fake
 * keeps every promise of the transport contract, so every default holds.
 */
public class FakeConnectorUnderTest implements ConnectorUnderTest {

  private final FakeFabric fabric;
  private final String engineFabric = "kit-" + UUID.randomUUID();

  /** Agents on a fabric of their own, copying on the fake's pool of threads. */
  public FakeConnectorUnderTest() {
    this(new FakeFabric());
  }

  /** Agents on {@code fabric}. */
  public FakeConnectorUnderTest(FakeFabric fabric) {
    this.fabric = fabric;
  }

  @Override
  public TransportProvider provider() {
    return new FakeTransportProvider();
  }

  @Override
  public Map<String, String> connectorProperties() {
    return Map.of(FakeTransportProvider.FABRIC, engineFabric);
  }

  @Override
  public Transport newTransport(String agentName) {
    return fabric.join(agentName);
  }
}
