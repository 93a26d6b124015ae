package io.kvbridge.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

class ConnectorPropertyBindingTest {

  private static Map<String, String> bind(List<String> types, Map<String, String> configured) {
    return ConnectorPropertyBinding.bind(
            new Binder(new MapConfigurationPropertySource(configured)), types)
        .asMap();
  }

  @Test
  void propertiesUnderATypeBecomeItsConnectorPropertiesNamedAfterIt() {
    assertThat(
            bind(
                List.of("nixl", "fake"),
                Map.of(
                    "kvbridge.nixl.memory", "dram",
                    "kvbridge.fake.shared-dir", "/tmp/fabric",
                    "kvbridge.lease.duration", "3s")))
        .isEqualTo(Map.of("nixl.memory", "dram", "fake.shared-dir", "/tmp/fabric"));
  }

  @Test
  void nestedNamesKeepTheirDotsAndCase() {
    assertThat(
            bind(
                List.of("nixl"),
                Map.of("kvbridge.nixl.backend.UCX.ucx_error_handling_mode", "none")))
        .isEqualTo(Map.of("nixl.backend.UCX.ucx_error_handling_mode", "none"));
  }

  @Test
  void aListWrittenItemByItemBecomesOneCommaSeparatedValueInItsOrder() {
    assertThat(
            bind(
                List.of("nixl"),
                Map.of(
                    "kvbridge.nixl.backends[1]", "UCX",
                    "kvbridge.nixl.backends[0]", "GDS",
                    "kvbridge.nixl.backends[2]", "POSIX")))
        .isEqualTo(Map.of("nixl.backends", "GDS,UCX,POSIX"));
  }

  @Test
  void aBlankItemIsKeptForTheConnectorToRefuse() {
    assertThat(
            bind(
                List.of("nixl"),
                Map.of("kvbridge.nixl.backends[0]", "UCX", "kvbridge.nixl.backends[1]", "")))
        .isEqualTo(Map.of("nixl.backends", "UCX,"));
  }

  @Test
  void aListSetBothWaysIsRefused() {
    assertThatThrownBy(
            () ->
                bind(
                    List.of("nixl"),
                    Map.of("kvbridge.nixl.backends", "UCX", "kvbridge.nixl.backends[0]", "GDS")))
        .isInstanceOfSatisfying(
            InvalidKvBridgePropertyException.class,
            e -> assertThat(e.property()).isEqualTo("kvbridge.nixl.backends"))
        .hasMessageContaining("set both as one value and item by item");
  }

  @Test
  void propertiesOfTypesWithoutAConnectorAreLeftOut() {
    assertThat(bind(List.of("fake"), Map.of("kvbridge.nixl.memory", "dram"))).isEmpty();
  }

  @Test
  void propertiesUnderKvbridgePropertiesAreRefusedNamingWhereToSetThem() {
    assertThatThrownBy(
            () -> bind(List.of("fake"), Map.of("kvbridge.properties.fake.shared-dir", "/tmp/x")))
        .isInstanceOfSatisfying(
            InvalidKvBridgePropertyException.class,
            e -> assertThat(e.property()).isEqualTo("kvbridge.properties.fake.shared-dir"))
        .hasMessageContaining("here kvbridge.fake.shared-dir");
  }
}
