package io.kvbridge.nixl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NixlOptionsTest {

  @Test
  void noPropertiesGiveTheDefaults() {
    NixlOptions options = NixlOptions.fromProperties(Map.of());

    assertThat(options).isEqualTo(NixlOptions.defaults());
    assertThat(options.memory()).isEqualTo(MemoryMode.AUTO);
    assertThat(options.backends()).containsExactly("UCX");
    assertThat(options.progressDelayMicros()).isEqualTo(NixlOptions.DEFAULT_PROGRESS_DELAY_US);
  }

  @Test
  void everyPropertyIsRead() {
    NixlOptions options =
        NixlOptions.fromProperties(
            Map.of(
                "nixl.memory", "VRAM",
                "nixl.cuda-device", "3",
                "nixl.progress-delay-us", "1000",
                "nixl.backends", "UCX, POSIX",
                "nixl.backend.UCX.ucx_error_handling_mode", "none",
                "nixl.telemetry", "true"));

    assertThat(options.memory()).isEqualTo(MemoryMode.VRAM);
    assertThat(options.cudaDevice()).isEqualTo(3);
    assertThat(options.progressDelayMicros()).isEqualTo(1000);
    assertThat(options.backends()).containsExactly("UCX", "POSIX");
    assertThat(options.backendParameters())
        .isEqualTo(Map.of("UCX", Map.of("ucx_error_handling_mode", "none")));
    assertThat(options.telemetry()).isTrue();
  }

  @Test
  void installationAndPluginDirectoryAreAcceptedAsProcessWideSettings() {
    assertThat(
            NixlOptions.fromProperties(
                Map.of("nixl.home", "/opt/nixl/lib", "nixl.plugin-dir", "/opt/nixl/lib/plugins")))
        .isEqualTo(NixlOptions.defaults());
  }

  @Test
  void propertiesOfOtherConnectorsAreIgnored() {
    assertThat(NixlOptions.fromProperties(Map.of("fake.fabric", "x")))
        .isEqualTo(NixlOptions.defaults());
  }

  @Test
  void anUnknownMemoryModeNamesThePropertyAndTheAcceptedValues() {
    assertThatThrownBy(() -> NixlOptions.fromProperties(Map.of("nixl.memory", "hbm")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("nixl.memory='hbm'")
        .hasMessageContaining("auto, vram, dram");
  }

  @Test
  void anUnknownNixlPropertyIsRefusedWithTheKnownOnes() {
    assertThatThrownBy(() -> NixlOptions.fromProperties(Map.of("nixl.memroy", "dram")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("nixl.memroy")
        .hasMessageContaining("nixl.memory");
  }

  @Test
  void aProgressDelayOutsideItsRangeIsRefused() {
    assertThatThrownBy(() -> NixlOptions.fromProperties(Map.of("nixl.progress-delay-us", "0")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("nixl.progress-delay-us=0");
  }

  @Test
  void aNonNumericDeviceIsRefused() {
    assertThatThrownBy(() -> NixlOptions.fromProperties(Map.of("nixl.cuda-device", "first")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("nixl.cuda-device='first'");
  }

  @Test
  void parametersOfABackendThatIsNotCreatedAreRefused() {
    assertThatThrownBy(
            () ->
                NixlOptions.fromProperties(
                    Map.of("nixl.backend.POSIX.use_aio", "true", "nixl.backends", "UCX")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("nixl.backend.POSIX");
  }

  @Test
  void aBackendParameterWithoutANameIsRefused() {
    assertThatThrownBy(() -> NixlOptions.fromProperties(Map.of("nixl.backend.UCX", "x")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("nixl.backend.<PLUGIN>.<name>");
  }

  @Test
  void anEmptyBackendListIsRefused() {
    assertThatThrownBy(() -> NixlOptions.fromProperties(Map.of("nixl.backends", " , ")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("nixl.backends");
  }

  @Test
  void theBackendListKeepsItsOrder() {
    assertThat(NixlOptions.fromProperties(Map.of("nixl.backends", "POSIX,UCX")).backends())
        .isEqualTo(List.of("POSIX", "UCX"));
  }
}
