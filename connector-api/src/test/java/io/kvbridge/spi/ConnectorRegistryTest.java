package io.kvbridge.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.runtime.ConnectorRegistry;
import io.kvbridge.transfer.Transport;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConnectorRegistryTest {

  @Test
  void unknownTypeFailsListingTheKnownTypes() {
    ConnectorRegistry registry =
        ConnectorRegistry.of(
            List.of(
                provider("fake", Availability.available()),
                provider("nixl", Availability.available())));

    assertThatThrownBy(() -> registry.require("rdma", ConnectorProperties.EMPTY))
        .isInstanceOf(UnknownConnectorTypeException.class)
        .hasMessageContaining("'rdma'")
        .hasMessageContaining("known types: fake, nixl");
  }

  @Test
  void twoProvidersOfOneTypeAreRefused() {
    assertThatThrownBy(
            () ->
                ConnectorRegistry.of(
                    List.of(
                        provider("x", Availability.available()),
                        provider("x", Availability.available()))))
        .hasMessageContaining("two connector providers claim type 'x'");
  }

  @Test
  void creatingAnUnavailableConnectorFailsWithItsReasonAndCause() {
    UnsatisfiedLinkError cause = new UnsatisfiedLinkError("libnixl_capi.so: cannot open");
    ConnectorRegistry registry =
        ConnectorRegistry.of(
            List.of(provider("nixl", Availability.unavailable("NIXL is not installed", cause))));

    assertThatThrownBy(() -> registry.create(ConnectorSettings.builder("nixl", "e").build()))
        .isInstanceOf(ConnectorUnavailableException.class)
        .hasMessageContaining("connector 'nixl' cannot run here: NIXL is not installed")
        .hasCause(cause);
  }

  @Test
  void availabilityIsDecidedWithTheEnginesConnectorProperties() {
    List<ConnectorProperties> asked = new ArrayList<>();
    TransportProvider provider =
        new TransportProvider() {
          @Override
          public String type() {
            return "native";
          }

          @Override
          public Availability availability(ConnectorProperties properties) {
            asked.add(properties);
            return properties.string("native.home").isPresent()
                ? Availability.available()
                : Availability.unavailable("native.home is not set", null);
          }

          @Override
          public Transport create(ConnectorSettings settings, int rank) {
            throw new UnsupportedOperationException("not needed by this test");
          }
        };
    ConnectorRegistry registry = ConnectorRegistry.of(List.of(provider));
    ConnectorProperties withHome = ConnectorProperties.of(Map.of("native.home", "/opt/native"));

    assertThat(registry.require("native", withHome)).isSameAs(provider);
    assertThatThrownBy(() -> registry.require("native", ConnectorProperties.EMPTY))
        .isInstanceOf(ConnectorUnavailableException.class)
        .hasMessageContaining("native.home is not set");
    assertThat(asked).containsExactly(withHome, ConnectorProperties.EMPTY);
  }

  @Test
  void serviceLoaderFindsNoProviderInTheApiAlone() {
    assertThat(ConnectorRegistry.load(getClass().getClassLoader()).types()).isEmpty();
  }

  private static TransportProvider provider(String type, Availability availability) {
    return new TransportProvider() {
      @Override
      public String type() {
        return type;
      }

      @Override
      public Availability availability(ConnectorProperties properties) {
        return availability;
      }

      @Override
      public Transport create(ConnectorSettings settings, int rank) {
        throw new UnsupportedOperationException("not needed by these tests");
      }
    };
  }
}
