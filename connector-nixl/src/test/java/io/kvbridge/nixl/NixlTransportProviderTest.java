package io.kvbridge.nixl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.nixl.capi.NixlLibrary;
import io.kvbridge.nixl.testing.RequiresNixl;
import io.kvbridge.runtime.ConnectorRegistry;
import io.kvbridge.runtime.PullConnector;
import io.kvbridge.spi.Availability;
import io.kvbridge.spi.ConnectorProperties;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.InvalidSettingException;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.transfer.AgentCore;
import io.kvbridge.transfer.MemoryKind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

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
  void theInstallationNamedByNixlHomeIsLoadedFrom() {
    Path loaded = NixlLibrary.require().libraryDir();

    assertThat(
            new NixlTransportProvider()
                .availability(ConnectorProperties.of(Map.of("nixl.home", loaded.toString()))))
        .isInstanceOf(Availability.Available.class);
  }

  @Test
  void anotherInstallationThanTheLoadedOneIsUnavailableNamingBoth(@TempDir Path other)
      throws Exception {
    Files.createFile(other.resolve("libnixl_capi.so"));
    Path loaded = NixlLibrary.require().libraryDir();

    assertThat(
            new NixlTransportProvider()
                .availability(ConnectorProperties.of(Map.of("nixl.home", other.toString()))))
        .isInstanceOfSatisfying(
            Availability.Unavailable.class,
            why ->
                assertThat(why.reason())
                    .contains("loaded it from " + loaded)
                    .contains(other.toString())
                    .contains("the same nixl.home"));
  }

  @Test
  void anInvalidPropertyIsRefusedWhenAvailabilityIsAsked() {
    assertThatThrownBy(
            () ->
                new NixlTransportProvider()
                    .availability(ConnectorProperties.of(Map.of("nixl.memory", "hbm"))))
        .isInstanceOfSatisfying(
            InvalidSettingException.class, e -> assertThat(e.setting()).isEqualTo("nixl.memory"));
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
      assertThat(pull.transport()).isInstanceOf(AgentCore.class);
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

    assertThatThrownBy(() -> new NixlTransportProvider().create(settings, 0))
        .isInstanceOf(InvalidSettingException.class)
        .hasMessageContaining("nixl.progress-delay-us 'soon'");
  }
}
