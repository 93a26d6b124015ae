package io.kvbridge.benchmarks;

import io.kvbridge.fake.FakeTransportProvider;
import io.kvbridge.nixl.MemoryMode;
import io.kvbridge.nixl.NixlOptions;
import io.kvbridge.nixl.NixlTransportProvider;
import io.kvbridge.runtime.ConnectorRegistry;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TransportProvider;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/** The connectors the end-to-end benchmarks drive: the fake, or NIXL in host memory. */
public final class BenchConnectors {

  private BenchConnectors() {}

  /**
   * A connector of {@code type} for engine {@code <deployment>-<engine>} in {@code role}: {@code
   * fake} on the fabric {@code deployment}, or {@code nixl} in host memory (which needs {@code
   * -Dkvbridge.nixl.home} and loopback UCX transports, as {@code benchmarks/run.sh} gives it); its
   * settings finished by {@code settings}.
   */
  public static KvConnector create(
      String type,
      String deployment,
      String engine,
      Role role,
      UnaryOperator<ConnectorSettings.Builder> settings) {
    TransportProvider provider;
    Map<String, String> properties;
    switch (type) {
      case FakeTransportProvider.TYPE -> {
        provider = new FakeTransportProvider();
        properties = Map.of(FakeTransportProvider.FABRIC, deployment);
      }
      case NixlTransportProvider.TYPE -> {
        provider = new NixlTransportProvider();
        properties = Map.of(NixlOptions.MEMORY, MemoryMode.DRAM.toString());
      }
      default ->
          throw new IllegalArgumentException(
              "connector '" + type + "' is not wired into this benchmark; use fake or nixl");
    }
    ConnectorSettings.Builder builder =
        ConnectorSettings.builder(provider.type(), deployment + "-" + engine)
            .role(role)
            .properties(properties);
    return ConnectorRegistry.of(List.of(provider)).create(settings.apply(builder).build());
  }
}
