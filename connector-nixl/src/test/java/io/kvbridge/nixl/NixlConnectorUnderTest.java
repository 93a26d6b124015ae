package io.kvbridge.nixl;

import io.kvbridge.spi.ConnectorProperties;
import io.kvbridge.spi.TransportProvider;
import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.transfer.Transport;
import java.util.Map;

/**
 * NIXL as the kit's suites run it: agents in this JVM, UCX over loopback. Engines started through
 * the provider and agents created directly take the same {@code nixl.*} properties: the memory they
 * use, whether they capture NIXL's telemetry of each transfer.
 */
final class NixlConnectorUnderTest implements ConnectorUnderTest {

  private final Map<String, String> properties;

  /**
   * NIXL with {@code properties}, read at each start of an engine or agent: a test may change them
   * for those it starts next.
   */
  NixlConnectorUnderTest(Map<String, String> properties) {
    this.properties = properties;
  }

  /** NIXL in {@code memory}, capturing no telemetry. */
  static NixlConnectorUnderTest in(MemoryMode memory) {
    return new NixlConnectorUnderTest(Map.of(NixlOptions.MEMORY, memory.toString()));
  }

  @Override
  public TransportProvider provider() {
    return new NixlTransportProvider();
  }

  @Override
  public Map<String, String> connectorProperties() {
    return Map.copyOf(properties);
  }

  @Override
  public Transport newTransport(String agentName) {
    return NixlBackend.transport(agentName, options());
  }

  /** UCX copies straight into a closed agent's still-living pages over cma and shared memory. */
  @Override
  public boolean closingRevokesPeerAccess() {
    return false;
  }

  @Override
  public boolean measuresTransfers() {
    return options().telemetry();
  }

  private NixlOptions options() {
    return NixlOptions.fromProperties(ConnectorProperties.of(properties));
  }
}
