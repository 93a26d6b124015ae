package io.kvbridge.nixl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.nixl.testing.RequiresNixl;
import io.kvbridge.runtime.ConnectorRegistry;
import io.kvbridge.runtime.PullConnector;
import io.kvbridge.spi.Availability;
import io.kvbridge.spi.ConnectorProperties;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.transfer.MemoryKind;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(RequiresNixl.class)
class NixlTransportProviderTest {

  @Test
  void isDiscoveredUnderTypeNixl() {
    ConnectorRegistry registry = ConnectorRegistry.load(getClass().getClassLoader());

    assertThat(registry.types()).contains("nixl");
    assertThat(registry.require("nixl", ConnectorProperties.EMPTY))
        .isInstanceOf(NixlTransportProvider.class);
  }

  @Test
  void isAvailableWhereNixlLoads() {
    assertThat(new NixlTransportProvider().availability(ConnectorProperties.EMPTY))
        .isInstanceOf(Availability.Available.class);
  }

  @Test
  void createsAPullConnectorOverANixlAgentNamedAfterTheEngine() {
    ConnectorSettings settings =
        ConnectorSettings.builder("nixl", "provider-engine")
            .properties(Map.of("nixl.memory", "dram"))
            .build();

    try (KvConnector connector =
        ConnectorRegistry.of(List.of(new NixlTransportProvider())).create(settings)) {
      assertThat(connector).isInstanceOf(PullConnector.class);
      PullConnector pull = (PullConnector) connector;
      assertThat(pull.transport()).isInstanceOf(NixlTransport.class);
      assertThat(pull.transport().agentName()).isEqualTo("provider-engine");
      assertThat(pull.transport().memoryKind()).isEqualTo(MemoryKind.DRAM);
    }
  }

  @Test
  void anInvalidPropertyStopsCreationNamingIt() {
    ConnectorSettings settings =
        ConnectorSettings.builder("nixl", "provider-engine")
            .properties(Map.of("nixl.progress-delay-us", "soon"))
            .build();

    assertThatThrownBy(() -> new NixlTransportProvider().create(settings))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("nixl.progress-delay-us='soon'");
  }
}
