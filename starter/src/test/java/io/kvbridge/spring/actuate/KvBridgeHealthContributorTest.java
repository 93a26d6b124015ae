package io.kvbridge.spring.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.ConnectorStatus;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.SchedulerSide;
import io.kvbridge.spi.WorkerSide;
import io.kvbridge.spring.KvBridgeAutoConfiguration;
import io.kvbridge.spring.KvConnectors;
import io.kvbridge.spring.Leases;
import io.kvbridge.spring.StubKvConnectors;
import io.kvbridge.spring.UnavailableTransportProvider;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.actuate.endpoint.CompositeHealthDescriptor;
import org.springframework.boot.health.actuate.endpoint.HealthDescriptor;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.actuate.endpoint.IndicatedHealthDescriptor;
import org.springframework.boot.health.autoconfigure.actuate.endpoint.HealthEndpointAutoConfiguration;
import org.springframework.boot.health.autoconfigure.registry.HealthContributorRegistryAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthContributors;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class KvBridgeHealthContributorTest {

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  KvBridgeAutoConfiguration.class,
                  KvBridgeHealthContributorAutoConfiguration.class));

  /** With Boot's health endpoint, as {@code /actuator/health/...} answers. */
  private final ApplicationContextRunner withEndpoint =
      runner
          .withConfiguration(
              AutoConfigurations.of(
                  HealthContributorRegistryAutoConfiguration.class,
                  HealthEndpointAutoConfiguration.class))
          .withPropertyValues("management.endpoint.health.show-details=always");

  @Test
  void anEngineIsUpWithItsConnectorsDetails() {
    runner.run(
        context -> {
          KvConnector producer =
              Leases.registered(
                  context.getBean(KvConnectors.class).create("prefill-h", Role.PRODUCER));
          Leases.grant(producer, "r-1");

          Health health = engine(context.getBean(KvBridgeHealthContributor.class), "prefill-h");

          assertThat(health.getStatus()).isEqualTo(Status.UP);
          assertThat(health.getDetails())
              .isEqualTo(
                  Map.of(
                      "type", "fake",
                      "role", "producer",
                      "engineId", "prefill-h",
                      "liveLeases", 1));
        });
  }

  @Test
  void aConsumerShowsItsLoadsInFlight() {
    runner.run(
        context -> {
          Leases.registered(context.getBean(KvConnectors.class).create("decode-h", Role.CONSUMER));

          Health health = engine(context.getBean(KvBridgeHealthContributor.class), "decode-h");

          assertThat(health.getStatus()).isEqualTo(Status.UP);
          assertThat(health.getDetails())
              .isEqualTo(
                  Map.of(
                      "type", "fake",
                      "role", "consumer",
                      "engineId", "decode-h",
                      "loadsInFlight", 0));
        });
  }

  @Test
  void eachEngineHasItsOwnPathUnderKvbridge() {
    withEndpoint.run(
        context -> {
          KvConnectors connectors = context.getBean(KvConnectors.class);
          Leases.registered(connectors.create("prefill-m", Role.PRODUCER));
          Leases.registered(connectors.create("decode-m", Role.CONSUMER));
          HealthEndpoint endpoint = context.getBean(HealthEndpoint.class);

          HealthDescriptor kvbridge = endpoint.healthForPath("kvbridge");
          HealthDescriptor decode = endpoint.healthForPath("kvbridge", "decode-m");

          assertThat(kvbridge.getStatus()).isEqualTo(Status.UP);
          assertThat(((CompositeHealthDescriptor) kvbridge).getComponents())
              .containsOnlyKeys("prefill-m", "decode-m");
          assertThat(decode.getStatus()).isEqualTo(Status.UP);
          assertThat(((IndicatedHealthDescriptor) decode).getDetails())
              .containsEntry("engineId", "decode-m")
              .containsEntry("role", "consumer");
        });
  }

  @Test
  void anEngineIsDownWithTheReasonWhenItsConnectorTypeCannotRun() {
    withEndpoint
        .withBean(
            KvConnectors.class,
            () ->
                new StubKvConnectors(
                    new UnavailableTransportProvider(),
                    List.of(new StatusUnreadable("prefill-x", Role.PRODUCER))))
        .run(
            context -> {
              HealthEndpoint endpoint = context.getBean(HealthEndpoint.class);

              HealthDescriptor engine = endpoint.healthForPath("kvbridge", "prefill-x");

              assertThat(engine.getStatus()).isEqualTo(Status.DOWN);
              assertThat(((IndicatedHealthDescriptor) engine).getDetails())
                  .containsEntry("type", UnavailableTransportProvider.TYPE)
                  .containsEntry("reason", UnavailableTransportProvider.REASON);
              assertThat(endpoint.healthForPath("kvbridge").getStatus()).isEqualTo(Status.DOWN);
            });
  }

  @Test
  void anEngineWhoseStatusCannotBeReadIsDownAndTheOthersStayUp() {
    runner.run(
        context -> {
          KvConnectors connectors = context.getBean(KvConnectors.class);
          KvConnector healthy = Leases.registered(connectors.create("prefill-u", Role.PRODUCER));
          KvBridgeHealthContributor health =
              new KvBridgeHealthContributor(
                  new StubKvConnectors(
                      connectors.provider(),
                      List.of(healthy, new StatusUnreadable("decode-u", Role.CONSUMER))));

          assertThat(engine(health, "prefill-u").getStatus()).isEqualTo(Status.UP);
          assertThat(engine(health, "decode-u").getStatus()).isEqualTo(Status.DOWN);
        });
  }

  @Test
  void aClosedConnectorLeavesTheHealth() {
    runner.run(
        context -> {
          KvConnector connector =
              context.getBean(KvConnectors.class).create("prefill-c", Role.PRODUCER);
          KvBridgeHealthContributor health = context.getBean(KvBridgeHealthContributor.class);
          assertThat(health.stream())
              .extracting(HealthContributors.Entry::name)
              .contains("prefill-c");

          connector.close();

          assertThat(health.stream()).isEmpty();
          assertThat(health.getContributor("prefill-c")).isNull();
        });
  }

  @Test
  void kvbridgeHasNoMemberBeforeAnyConnectorIsCreated() {
    runner.run(
        context -> assertThat(context.getBean(KvBridgeHealthContributor.class).stream()).isEmpty());
  }

  @Test
  void healthContributorIsLeftOutWhenDisabled() {
    runner
        .withPropertyValues("management.health.kvbridge.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(KvBridgeHealthContributor.class));
  }

  @Test
  void healthContributorIsLeftOutWithoutHealthSupportOnTheClassPath() {
    runner
        .withClassLoader(new FilteredClassLoader(Health.class))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).doesNotHaveBean(KvBridgeHealthContributor.class);
              assertThat(context).hasSingleBean(KvConnectors.class);
            });
  }

  @Test
  void applicationHealthContributorReplacesOurs() {
    KvBridgeHealthContributor own =
        new KvBridgeHealthContributor(new StubKvConnectors(new UnavailableTransportProvider()));
    runner
        .withBean("kvbridgeHealthContributor", KvBridgeHealthContributor.class, () -> own)
        .run(context -> assertThat(context.getBean(KvBridgeHealthContributor.class)).isSameAs(own));
  }

  @Test
  void applicationHealthIndicatorOfTheOldNameReplacesOurs() {
    HealthIndicator own = () -> Health.up().build();
    runner
        .withBean("kvbridgeHealthIndicator", HealthIndicator.class, () -> own)
        .run(context -> assertThat(context).doesNotHaveBean(KvBridgeHealthContributor.class));
  }

  private static Health engine(KvBridgeHealthContributor health, String engineId) {
    return ((HealthIndicator) health.getContributor(engineId)).health();
  }

  /** A connector that has an engine id and nothing else: reading its status fails. */
  private record StatusUnreadable(ConnectorSettings settings) implements KvConnector {

    StatusUnreadable(String engineId, Role role) {
      this(ConnectorSettings.builder("stub", engineId).role(role).build());
    }

    @Override
    public SchedulerSide scheduler() {
      throw new UnsupportedOperationException("stub");
    }

    @Override
    public WorkerSide worker(int rank) {
      throw new UnsupportedOperationException("stub");
    }

    @Override
    public void peerGone(String engineId, String why) {
      throw new UnsupportedOperationException("stub");
    }

    @Override
    public AutoCloseable listen(io.kvbridge.spi.ConnectorListener listener) {
      throw new UnsupportedOperationException("stub");
    }

    @Override
    public ConnectorStatus status() {
      throw new IllegalStateException("the status of " + settings.engineId() + " is unreadable");
    }

    @Override
    public void close() {}
  }
}
