package io.kvbridge.nixl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.nixl.capi.NixlLibrary;
import io.kvbridge.spi.ConnectorProperties;
import io.kvbridge.spi.InvalidSettingException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class NixlOptionsTest {

  private static ConnectorProperties properties(String... keysAndValues) {
    Map<String, String> map = new HashMap<>();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      map.put(keysAndValues[i], keysAndValues[i + 1]);
    }
    return ConnectorProperties.of(map);
  }

  @Test
  void noPropertiesGiveTheDefaults() {
    NixlOptions options = NixlOptions.fromProperties(properties());

    assertThat(options).isEqualTo(NixlOptions.defaults());
    assertThat(options.memory()).isEqualTo(MemoryMode.AUTO);
    assertThat(options.backends()).containsExactly("UCX");
    assertThat(options.progressDelayMicros()).isEqualTo(NixlOptions.DEFAULT_PROGRESS_DELAY_US);
  }

  @Test
  void everyPropertyIsRead() {
    NixlOptions options =
        NixlOptions.fromProperties(
            ConnectorProperties.of(
                Map.of(
                    "nixl.memory", "VRAM",
                    "nixl.cuda-device", "3",
                    "nixl.progress-delay-us", "1000",
                    "nixl.backends", "UCX, POSIX",
                    "nixl.backend.UCX.ucx_error_handling_mode", "none",
                    "nixl.telemetry", "true")));

    assertThat(options.memory()).isEqualTo(MemoryMode.VRAM);
    assertThat(options.cudaDevice()).isEqualTo(3);
    assertThat(options.progressDelayMicros()).isEqualTo(1000);
    assertThat(options.backends()).containsExactly("UCX", "POSIX");
    assertThat(options.backendParameters())
        .isEqualTo(Map.of("UCX", Map.of("ucx_error_handling_mode", "none")));
    assertThat(options.telemetry()).isTrue();
  }

  @Test
  void installationAndPluginDirectoryAreReadAsTheLocationToLoadNixlFrom() {
    NixlOptions options =
        NixlOptions.fromProperties(
            properties("nixl.home", "/opt/nixl/lib", "nixl.plugin-dir", "/opt/nixl/lib/plugins"));

    assertThat(options.library())
        .isEqualTo(
            new NixlLibrary.Location(
                Optional.of(Path.of("/opt/nixl/lib")),
                Optional.of(Path.of("/opt/nixl/lib/plugins"))));
  }

  @Test
  void withoutInstallationOrPluginDirectoryTheJvmsDefaultsApply() {
    assertThat(NixlOptions.fromProperties(ConnectorProperties.EMPTY).library())
        .isEqualTo(NixlLibrary.Location.DEFAULT);
  }

  @Test
  void propertiesOfOtherConnectorsAreIgnored() {
    assertThat(NixlOptions.fromProperties(properties("fake.fabric", "x")))
        .isEqualTo(NixlOptions.defaults());
  }

  @Test
  void anUnknownMemoryModeNamesThePropertyAndTheAcceptedValues() {
    assertThatThrownBy(() -> NixlOptions.fromProperties(properties("nixl.memory", "hbm")))
        .isInstanceOf(InvalidSettingException.class)
        .hasMessageContaining("nixl.memory 'hbm'")
        .hasMessageContaining("auto, vram, dram");
  }

  @Test
  void anUnknownNixlPropertyIsRefusedWithTheKnownOnes() {
    assertThatThrownBy(() -> NixlOptions.fromProperties(properties("nixl.memroy", "dram")))
        .isInstanceOf(InvalidSettingException.class)
        .hasMessageContaining("nixl.memroy")
        .hasMessageContaining("nixl.memory");
  }

  @Test
  void aProgressDelayOutsideItsRangeIsRefused() {
    assertThatThrownBy(() -> NixlOptions.fromProperties(properties("nixl.progress-delay-us", "0")))
        .isInstanceOf(InvalidSettingException.class)
        .hasMessageContaining(
            "nixl.progress-delay-us '0' is not a whole number between 1 and 10000");
  }

  @Test
  void aNonNumericDeviceIsRefused() {
    assertThatThrownBy(() -> NixlOptions.fromProperties(properties("nixl.cuda-device", "first")))
        .isInstanceOf(InvalidSettingException.class)
        .hasMessageContaining("nixl.cuda-device 'first'");
  }

  @Test
  void parametersOfABackendThatIsNotCreatedAreRefused() {
    assertThatThrownBy(
            () ->
                NixlOptions.fromProperties(
                    properties("nixl.backend.POSIX.use_aio", "true", "nixl.backends", "UCX")))
        .isInstanceOf(InvalidSettingException.class)
        .hasMessageContaining("nixl.backend.POSIX");
  }

  @Test
  void aBackendParameterWithoutANameIsRefused() {
    assertThatThrownBy(() -> NixlOptions.fromProperties(properties("nixl.backend.UCX", "x")))
        .isInstanceOf(InvalidSettingException.class)
        .hasMessageContaining("nixl.backend.<PLUGIN>.<name>");
  }

  @Test
  void anEmptyBackendListIsRefused() {
    assertThatThrownBy(() -> NixlOptions.fromProperties(properties("nixl.backends", " , ")))
        .isInstanceOf(InvalidSettingException.class)
        .hasMessageContaining("nixl.backends");
  }

  @Test
  void aBlankEntryInTheBackendListIsRefusedNamingTheProperty() {
    assertThatThrownBy(() -> NixlOptions.fromProperties(properties("nixl.backends", "UCX,")))
        .isInstanceOfSatisfying(
            InvalidSettingException.class, e -> assertThat(e.setting()).isEqualTo("nixl.backends"))
        .hasMessage("nixl.backends 'UCX,' is not comma-separated names without empty entries");
  }

  @Test
  void theBackendListKeepsItsOrder() {
    assertThat(NixlOptions.fromProperties(properties("nixl.backends", "POSIX,UCX")).backends())
        .isEqualTo(List.of("POSIX", "UCX"));
  }
}
