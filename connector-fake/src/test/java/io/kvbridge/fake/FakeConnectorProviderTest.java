package io.kvbridge.fake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.protocol.PullConnector;
import io.kvbridge.spi.ConnectorRegistry;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.transfer.Transport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FakeConnectorProviderTest {

  private final String fabricName = "provider-" + UUID.randomUUID();

  @Test
  void serviceLoaderFindsTheFakeProvider() {
    ConnectorRegistry registry = ConnectorRegistry.load(getClass().getClassLoader());

    assertThat(registry.types()).contains("fake");
    assertThat(registry.provider("fake")).isInstanceOf(FakeConnectorProvider.class);
  }

  @Test
  void fakeIsAlwaysAvailable() {
    assertThat(new FakeConnectorProvider().availability().isAvailable()).isTrue();
  }

  @Test
  void registryCreatesAPullConnectorOverAFakeTransport() {
    try (KvConnector connector =
        ConnectorRegistry.load(getClass().getClassLoader()).create(settings("engine-a"))) {
      assertThat(connector).isInstanceOf(PullConnector.class);
      assertThat(((PullConnector) connector).transport()).isInstanceOf(FakeTransport.class);
    }
  }

  @Test
  void agentIsNamedAfterTheEngineOnTheNamedFabric() {
    try (KvConnector connector = new FakeConnectorProvider().create(settings("engine-a"))) {
      Transport transport = ((PullConnector) connector).transport();

      assertThat(transport.agentName()).isEqualTo("engine-a");
      assertThat(((FakeTransport) transport).fabric()).isSameAs(FakeFabric.named(fabricName));
      assertThat(FakeFabric.named(fabricName).agentNames()).containsExactly("engine-a");
    }
  }

  @Test
  void aSecondConnectorOfTheSameEngineIdGetsAUniqueAgentName() {
    FakeConnectorProvider provider = new FakeConnectorProvider();
    try (KvConnector first = provider.create(settings("engine-a"));
        KvConnector second = provider.create(settings("engine-a"))) {
      assertThat(((PullConnector) first).transport().agentName()).isEqualTo("engine-a");
      assertThat(((PullConnector) second).transport().agentName()).isEqualTo("engine-a-2");
    }
  }

  @Test
  void withoutAFabricPropertyTheSharedFabricIsUsed() {
    String engine = "shared-" + UUID.randomUUID();
    try (KvConnector connector =
        new FakeConnectorProvider().create(ConnectorSettings.builder("fake", engine).build())) {
      assertThat(((FakeTransport) ((PullConnector) connector).transport()).fabric())
          .isSameAs(FakeFabric.shared());
    }
  }

  @Test
  void closingTheConnectorTakesItsAgentOffTheFabric() {
    new FakeConnectorProvider().create(settings("engine-a")).close();

    assertThat(FakeFabric.named(fabricName).agentNames()).isEmpty();
  }

  @Test
  void unknownFakePropertyIsRefusedListingTheKnownOnes() {
    ConnectorSettings settings =
        ConnectorSettings.builder("fake", "engine-a")
            .properties(Map.of("fake.fabrik", "x"))
            .build();

    assertThatThrownBy(() -> new FakeConnectorProvider().create(settings))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'fake.fabrik'")
        .hasMessageContaining("fake.fabric");
  }

  @Test
  void propertiesOfOtherConnectorsAreIgnored() {
    ConnectorSettings settings =
        ConnectorSettings.builder("fake", "engine-a")
            .properties(Map.of(FakeConnectorProvider.FABRIC, fabricName, "nixl.memory", "vram"))
            .build();

    try (KvConnector connector = new FakeConnectorProvider().create(settings)) {
      assertThat(connector.settings().engineId()).isEqualTo("engine-a");
    }
  }

  @Test
  void sharedDirPropertyPutsTheAgentOnThatDirectorysFabric(@TempDir Path dir) {
    ConnectorSettings settings =
        ConnectorSettings.builder("fake", "engine-a")
            .properties(Map.of(FakeConnectorProvider.SHARED_DIR, dir.toString()))
            .build();

    try (KvConnector connector = new FakeConnectorProvider().create(settings)) {
      assertThat(((FakeTransport) ((PullConnector) connector).transport()).fabric())
          .isSameAs(FakeFabric.sharedDirectory(dir));
      assertThat(dir.resolve("agents").resolve("engine-a")).isDirectory();
    }
  }

  @Test
  void fabricAndSharedDirTogetherAreRefused(@TempDir Path dir) {
    ConnectorSettings settings =
        ConnectorSettings.builder("fake", "engine-a")
            .properties(
                Map.of(
                    FakeConnectorProvider.SHARED_DIR,
                    dir.toString(),
                    FakeConnectorProvider.FABRIC,
                    fabricName))
            .build();

    assertThatThrownBy(() -> new FakeConnectorProvider().create(settings))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not both");
  }

  @Test
  void sharedDirThatCannotBeADirectoryIsRefusedNamingIt(@TempDir Path dir) throws Exception {
    Path file = Files.writeString(dir.resolve("plain-file"), "x");
    ConnectorSettings settings =
        ConnectorSettings.builder("fake", "engine-a")
            .properties(Map.of(FakeConnectorProvider.SHARED_DIR, file.toString()))
            .build();

    assertThatThrownBy(() -> new FakeConnectorProvider().create(settings))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("fake.shared-dir=" + file);
  }

  private ConnectorSettings settings(String engineId) {
    return ConnectorSettings.builder("fake", engineId)
        .properties(Map.of(FakeConnectorProvider.FABRIC, fabricName))
        .build();
  }
}
