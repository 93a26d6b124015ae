package io.kvbridge.fake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.runtime.ConnectorRegistry;
import io.kvbridge.runtime.PullConnector;
import io.kvbridge.spi.Availability;
import io.kvbridge.spi.ConnectorProperties;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.InvalidSettingException;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.transfer.AgentCore;
import io.kvbridge.transfer.Transport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FakeTransportProviderTest {

  private final String fabricName = "provider-" + UUID.randomUUID();

  @Test
  void serviceLoaderFindsTheFakeProvider() {
    ConnectorRegistry registry = ConnectorRegistry.load(getClass().getClassLoader());

    assertThat(registry.types()).contains("fake");
    assertThat(registry.require("fake", ConnectorProperties.EMPTY))
        .isInstanceOf(FakeTransportProvider.class);
  }

  @Test
  void fakeIsAlwaysAvailable() {
    assertThat(new FakeTransportProvider().availability(ConnectorProperties.EMPTY))
        .isInstanceOf(Availability.Available.class);
  }

  @Test
  void registryCreatesAPullConnectorOverAFakeTransport() {
    try (KvConnector connector =
        ConnectorRegistry.load(getClass().getClassLoader()).create(settings("engine-a"))) {
      assertThat(connector).isInstanceOf(PullConnector.class);
      assertThat(((PullConnector) connector).transport()).isInstanceOf(AgentCore.class);
      assertThat(FakeFabric.named(fabricName).agentNames()).containsExactly("engine-a");
    }
  }

  @Test
  void agentIsNamedAfterTheEngineOnTheNamedFabric() {
    try (Transport transport = new FakeTransportProvider().create(settings("engine-a"), 0)) {
      assertThat(transport.agentName()).isEqualTo("engine-a");
      assertThat(FakeFabric.named(fabricName).agentNames()).containsExactly("engine-a");
    }
  }

  @Test
  void aSecondConnectorOfTheSameEngineIdGetsAUniqueAgentName() {
    FakeTransportProvider provider = new FakeTransportProvider();
    try (Transport first = provider.create(settings("engine-a"), 0);
        Transport second = provider.create(settings("engine-a"), 0)) {
      assertThat(first.agentName()).isEqualTo("engine-a");
      assertThat(second.agentName()).isEqualTo("engine-a-2");
    }
  }

  @Test
  void withoutAFabricPropertyTheSharedFabricIsUsed() {
    String engine = "shared-" + UUID.randomUUID();
    try (Transport transport =
        new FakeTransportProvider().create(ConnectorSettings.builder("fake", engine).build(), 0)) {
      assertThat(FakeFabric.shared().agentNames()).contains(transport.agentName());
    }
  }

  @Test
  void closingTheConnectorTakesItsAgentOffTheFabric() {
    ConnectorRegistry.of(List.of(new FakeTransportProvider())).create(settings("engine-a")).close();

    assertThat(FakeFabric.named(fabricName).agentNames()).isEmpty();
  }

  @Test
  void unknownFakePropertyIsRefusedListingTheKnownOnes() {
    ConnectorSettings settings =
        ConnectorSettings.builder("fake", "engine-a")
            .properties(Map.of("fake.fabrik", "x"))
            .build();

    assertThatThrownBy(() -> new FakeTransportProvider().create(settings, 0))
        .isInstanceOf(InvalidSettingException.class)
        .hasMessageContaining("fake.fabrik is unknown")
        .hasMessageContaining("fake.fabric");
  }

  @Test
  void anInvalidFakePropertyIsRefusedWhenAvailabilityIsAsked() {
    ConnectorProperties properties = ConnectorProperties.of(Map.of("fake.fabrik", "x"));

    assertThatThrownBy(() -> new FakeTransportProvider().availability(properties))
        .isInstanceOfSatisfying(
            InvalidSettingException.class, e -> assertThat(e.setting()).isEqualTo("fake.fabrik"));
  }

  @Test
  void propertiesOfOtherConnectorsAreIgnored() {
    ConnectorSettings settings =
        ConnectorSettings.builder("fake", "engine-a")
            .properties(Map.of(FakeTransportProvider.FABRIC, fabricName, "nixl.memory", "vram"))
            .build();

    try (Transport transport = new FakeTransportProvider().create(settings, 0)) {
      assertThat(transport.agentName()).isEqualTo("engine-a");
    }
  }

  @Test
  void sharedDirPropertyPutsTheAgentOnThatDirectorysFabric(@TempDir Path dir) {
    ConnectorSettings settings =
        ConnectorSettings.builder("fake", "engine-a")
            .properties(Map.of(FakeTransportProvider.SHARED_DIR, dir.toString()))
            .build();

    try (Transport transport = new FakeTransportProvider().create(settings, 0)) {
      assertThat(FakeFabric.sharedDirectory(dir).agentNames())
          .containsExactly(transport.agentName());
      assertThat(dir.resolve("agents").resolve("engine-a")).isDirectory();
    }
  }

  @Test
  void fabricAndSharedDirTogetherAreRefused(@TempDir Path dir) {
    ConnectorSettings settings =
        ConnectorSettings.builder("fake", "engine-a")
            .properties(
                Map.of(
                    FakeTransportProvider.SHARED_DIR,
                    dir.toString(),
                    FakeTransportProvider.FABRIC,
                    fabricName))
            .build();

    assertThatThrownBy(() -> new FakeTransportProvider().create(settings, 0))
        .isInstanceOf(InvalidSettingException.class)
        .hasMessageContaining("fake.fabric cannot be set together with fake.shared-dir");
  }

  @Test
  void sharedDirThatCannotBeADirectoryIsRefusedNamingIt(@TempDir Path dir) throws Exception {
    Path file = Files.writeString(dir.resolve("plain-file"), "x");
    ConnectorSettings settings =
        ConnectorSettings.builder("fake", "engine-a")
            .properties(Map.of(FakeTransportProvider.SHARED_DIR, file.toString()))
            .build();

    assertThatThrownBy(() -> new FakeTransportProvider().create(settings, 0))
        .isInstanceOf(InvalidSettingException.class)
        .hasMessageContaining("fake.shared-dir '" + file + "' is not a usable directory");
  }

  private ConnectorSettings settings(String engineId) {
    return ConnectorSettings.builder("fake", engineId)
        .properties(Map.of(FakeTransportProvider.FABRIC, fabricName))
        .build();
  }
}
