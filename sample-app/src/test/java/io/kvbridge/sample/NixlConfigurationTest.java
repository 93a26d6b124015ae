package io.kvbridge.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvbridge.nixl.capi.NixlLibrary;
import io.kvbridge.spi.Availability;
import io.kvbridge.spring.InvalidKvBridgePropertyException;
import io.kvbridge.spring.KvBridgeAutoConfiguration;
import io.kvbridge.spring.KvConnectors;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.env.StandardEnvironment;

/**
 * The NIXL connector's own properties, set under {@code kvbridge.nixl.}, as an application with the
 * starter and the NIXL connector sees them: checked by the connector before any engine starts (NIXL
 * itself need not load for that), and reported under their full names.
 */
class NixlConfigurationTest {

  // The build's switch -Dkvbridge.nixl.required reaches the JVM under test as a system property,
  // where it would read as a connector property the NIXL connector does not know: these tests see
  // only the properties they set.
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withInitializer(
              context ->
                  context
                      .getEnvironment()
                      .getPropertySources()
                      .remove(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME))
          .withConfiguration(AutoConfigurations.of(KvBridgeAutoConfiguration.class))
          .withPropertyValues("kvbridge.connector.type=nixl");

  private void assertRejected(String property, String message, String... values) {
    runner
        .withPropertyValues(values)
        .run(
            context -> {
              InvalidKvBridgePropertyException e = invalidProperty(context);
              assertThat(e.property()).isEqualTo(property);
              assertThat(e.getMessage()).isEqualTo(message);
            });
  }

  @Test
  void blankNixlBackendIsRejected() {
    assertRejected(
        "kvbridge.nixl.backends",
        "kvbridge.nixl.backends 'UCX,' is not comma-separated names without empty entries",
        "kvbridge.nixl.backends[0]=UCX",
        "kvbridge.nixl.backends[1]=");
  }

  @Test
  void unknownNixlMemoryIsRejectedWithTheValidKinds() {
    assertRejected(
        "kvbridge.nixl.memory",
        "kvbridge.nixl.memory 'hbm' is not one of auto, vram, dram",
        "kvbridge.nixl.memory=hbm");
  }

  @Test
  void unknownNixlPropertyIsRejectedWithTheKnownOnes() {
    runner
        .withPropertyValues("kvbridge.nixl.memroy=dram")
        .run(
            context ->
                assertThat(invalidProperty(context).getMessage())
                    .startsWith("kvbridge.nixl.memroy is unknown; known: nixl.memory,"));
  }

  @Test
  void withOnlyTheConnectorTypeSetNixlIsLoadedFromWhereTheBuildPutIt() {
    Optional<Path> built = NixlLibrary.builtAgainst();
    if (!Boolean.getBoolean("kvbridge.test.nixl-required")) {
      assumeTrue(
          built.filter(Files::isDirectory).isPresent(),
          "this build has no NIXL of its own (kvbridge.nixl.required=false)");
    }
    assertThat(System.getProperty(NixlLibrary.HOME_PROPERTY)).isNull();

    runner.run(
        context -> {
          assertThat(context).hasNotFailed();
          assertThat(context.getBean(KvConnectors.class).availability())
              .isInstanceOf(Availability.Available.class);
          assertThat(NixlLibrary.require().libraryDir()).isEqualTo(built.orElseThrow());
        });
  }

  private static InvalidKvBridgePropertyException invalidProperty(
      AssertableApplicationContext context) {
    assertThat(context).hasFailed();
    for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
      if (t instanceof InvalidKvBridgePropertyException e) {
        return e;
      }
    }
    throw new AssertionError("start-up failed for another reason", context.getStartupFailure());
  }
}
