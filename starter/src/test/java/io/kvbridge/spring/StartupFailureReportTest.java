package io.kvbridge.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;

/** What a user reads when kvbridge's configuration stops a real application from starting. */
@ExtendWith(OutputCaptureExtension.class)
class StartupFailureReportTest {

  private static void start(String... properties) {
    assertThatException()
        .isThrownBy(
            () ->
                new SpringApplicationBuilder(Application.class)
                    .web(WebApplicationType.NONE)
                    .properties("spring.main.banner-mode=off")
                    .properties(properties)
                    .run()
                    .close());
  }

  @Test
  void invalidPropertyIsReportedWithTheActionToTake(CapturedOutput output) {
    start("kvbridge.lease.max-lifetime=10s");

    assertThat(output)
        .contains(
            "Description:",
            "Invalid kvbridge configuration: kvbridge.lease.max-lifetime (10s) must be at least"
                + " the lease duration (30s)",
            "Action:",
            "Update kvbridge.lease.max-lifetime in your application's configuration.");
  }

  @Test
  void unknownConnectorTypeIsReportedWithTheKnownTypes(CapturedOutput output) {
    start("kvbridge.connector.type=foo");

    assertThat(output)
        .contains(
            "kvbridge.connector.type 'foo' is unknown; known types: fake, unavailable",
            "Update kvbridge.connector.type in your application's configuration.");
  }

  @Test
  void unavailableConnectorIsReportedWithItsReason(CapturedOutput output) {
    start("kvbridge.connector.type=unavailable");

    assertThat(output)
        .contains(
            "connector 'unavailable' cannot run here: "
                + UnavailableTransportProvider.REASON
                + "; make it available on this machine or set kvbridge.connector.type to another"
                + " type (known types: fake, unavailable)",
            "set kvbridge.connector.type to a connector that can run here.");
  }

  @Test
  void unknownRoleIsReportedWithTheValidRoles(CapturedOutput output) {
    start("kvbridge.role=leader");

    assertThat(output)
        .contains(
            "kvbridge.role",
            "\"leader\"",
            "The following values are valid:",
            "both",
            "consumer",
            "producer");
  }

  @Test
  void unknownLoadFailurePolicyIsReportedWithTheValidPolicies(CapturedOutput output) {
    start("kvbridge.load-failure-policy=retry");

    assertThat(output)
        .contains(
            "kvbridge.load-failure-policy",
            "\"retry\"",
            "The following values are valid:",
            "FAIL",
            "RECOMPUTE");
  }

  @Test
  void unknownStagingModeIsReportedWithTheValidModes(CapturedOutput output) {
    start("kvbridge.consumer.staging=sometimes");

    assertThat(output)
        .contains(
            "kvbridge.consumer.staging",
            "\"sometimes\"",
            "The following values are valid:",
            "ALWAYS",
            "AUTO",
            "NEVER");
  }

  @Test
  void invalidConnectorPropertyIsReportedUnderItsFullName(CapturedOutput output) {
    start("kvbridge.fake.fabrik=demo");

    assertThat(output)
        .contains(
            "Invalid kvbridge configuration: kvbridge.fake.fabrik is unknown; known: fake.fabric,"
                + " fake.shared-dir",
            "Update kvbridge.fake.fabrik in your application's configuration.");
  }

  @Configuration(proxyBeanMethods = false)
  @ImportAutoConfiguration(KvBridgeAutoConfiguration.class)
  static class Application {}
}
