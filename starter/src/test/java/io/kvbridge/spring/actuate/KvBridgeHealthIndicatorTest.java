package io.kvbridge.spring.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.Role;
import io.kvbridge.spring.KvBridgeAutoConfiguration;
import io.kvbridge.spring.KvConnectors;
import io.kvbridge.spring.Leases;
import io.kvbridge.spring.StubKvConnectors;
import io.kvbridge.spring.UnavailableTransportProvider;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class KvBridgeHealthIndicatorTest {

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  KvBridgeAutoConfiguration.class,
                  KvBridgeHealthContributorAutoConfiguration.class));

  @Test
  void healthIsUpWithEachConnectorsDetails() {
    runner.run(
        context -> {
          KvConnector producer =
              Leases.registered(
                  context.getBean(KvConnectors.class).create("prefill-h", Role.PRODUCER));
          Leases.grant(producer, "r-1");

          Health health = context.getBean(KvBridgeHealthIndicator.class).health();

          assertThat(health.getStatus()).isEqualTo(Status.UP);
          assertThat(health.getDetails())
              .containsEntry("type", "fake")
              .containsEntry(
                  "connectors",
                  Map.of(
                      "prefill-h",
                      Map.of(
                          "type", "fake",
                          "role", "producer",
                          "engineId", "prefill-h",
                          "liveLeases", 1,
                          "loadsInFlight", 0)));
        });
  }

  @Test
  void healthIsUpBeforeAnyConnectorIsCreated() {
    runner.run(
        context -> {
          Health health = context.getBean(KvBridgeHealthIndicator.class).health();
          assertThat(health.getStatus()).isEqualTo(Status.UP);
          assertThat(health.getDetails()).containsEntry("connectors", Map.of());
        });
  }

  @Test
  void healthIsDownWithTheReasonWhenTheProviderCannotRun() {
    runner
        .withBean(
            KvConnectors.class, () -> new StubKvConnectors(new UnavailableTransportProvider()))
        .run(
            context -> {
              Health health = context.getBean(KvBridgeHealthIndicator.class).health();
              assertThat(health.getStatus()).isEqualTo(Status.DOWN);
              assertThat(health.getDetails())
                  .containsEntry("type", "unavailable")
                  .containsEntry("reason", UnavailableTransportProvider.REASON);
            });
  }

  @Test
  void healthIndicatorIsLeftOutWhenDisabled() {
    runner
        .withPropertyValues("management.health.kvbridge.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(KvBridgeHealthIndicator.class));
  }

  @Test
  void healthIndicatorIsLeftOutWithoutHealthSupportOnTheClassPath() {
    runner
        .withClassLoader(new FilteredClassLoader(Health.class))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).doesNotHaveBean(KvBridgeHealthIndicator.class);
              assertThat(context).hasSingleBean(KvConnectors.class);
            });
  }

  @Test
  void applicationHealthIndicatorReplacesOurs() {
    KvBridgeHealthIndicator own =
        new KvBridgeHealthIndicator(new StubKvConnectors(new UnavailableTransportProvider()));
    runner
        .withBean("kvbridgeHealthIndicator", KvBridgeHealthIndicator.class, () -> own)
        .run(context -> assertThat(context.getBean(KvBridgeHealthIndicator.class)).isSameAs(own));
  }
}
