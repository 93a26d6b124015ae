package io.kvbridge.spring.actuate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.discovery.etcd.EtcdDiscovery;
import io.kvbridge.discovery.etcd.testing.EtcdServer;
import io.kvbridge.spring.KvBridgeAutoConfiguration;
import io.kvbridge.spring.KvConnectors;
import io.kvbridge.spring.Leases;
import io.kvbridge.spring.discovery.EtcdDiscoveryAutoConfiguration;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class EtcdDiscoveryHealthIndicatorTest {

  private EtcdServer etcd;
  private ApplicationContextRunner runner;

  @BeforeEach
  void startEtcd() {
    etcd = EtcdServer.start();
    runner =
        new ApplicationContextRunner()
            .withConfiguration(
                AutoConfigurations.of(
                    KvBridgeAutoConfiguration.class,
                    EtcdDiscoveryAutoConfiguration.class,
                    KvBridgeHealthContributorAutoConfiguration.class,
                    EtcdDiscoveryHealthContributorAutoConfiguration.class))
            .withPropertyValues(
                "kvbridge.discovery.etcd.endpoints=" + etcd.endpoint(),
                "kvbridge.discovery.etcd.ttl=1s",
                "kvbridge.fake.fabric=etcd-health");
  }

  @AfterEach
  void stopEtcd() {
    etcd.close();
  }

  @Test
  void healthIsUpWhenConnectedAndEveryEngineIsRegistered() {
    runner.run(
        context -> {
          Leases.registered(context.getBean(KvConnectors.class).create());
          EtcdDiscoveryHealthIndicator indicator =
              context.getBean("kvbridgeEtcdHealthIndicator", EtcdDiscoveryHealthIndicator.class);

          // The engine is known once the watch has shown its own registration back.
          await()
              .atMost(Duration.ofSeconds(20))
              .untilAsserted(
                  () -> {
                    Health health = indicator.health();
                    assertThat(health.getStatus()).isEqualTo(Status.UP);
                    assertThat(health.getDetails())
                        .containsEntry("endpoints", List.of(etcd.endpoint()))
                        .containsEntry("connected", true)
                        .containsEntry("registrations", Map.of("engine-0", "registered"))
                        .containsEntry("knownEngines", 1);
                  });
        });
  }

  @Test
  void healthIsOutOfServiceWithTheReasonWhileEtcdIsUnreachableAndTheEngineStaysUp() {
    runner.run(
        context -> {
          Leases.registered(context.getBean(KvConnectors.class).create());
          EtcdDiscoveryHealthIndicator indicator =
              context.getBean(EtcdDiscoveryHealthIndicator.class);
          await().atMost(Duration.ofSeconds(20)).until(() -> up(indicator.health()));

          etcd.stop();

          await()
              .atMost(Duration.ofSeconds(20))
              .until(() -> indicator.health().getStatus().equals(Status.OUT_OF_SERVICE));
          assertThat(indicator.health().getDetails())
              .containsEntry("connected", false)
              .containsEntry("registrations", Map.of("engine-0", "not_registered"))
              .hasEntrySatisfying(
                  "reason", reason -> assertThat(reason.toString()).contains("is unreachable"));
          HealthIndicator engine =
              (HealthIndicator)
                  context.getBean(KvBridgeHealthContributor.class).getContributor("engine-0");
          assertThat(engine.health().getStatus()).isEqualTo(Status.UP);
        });
  }

  @Test
  void engineWaitingForItsKvCacheDoesNotMakeHealthOutOfService() {
    runner.run(
        context -> {
          context.getBean(KvConnectors.class).create();
          EtcdDiscoveryHealthIndicator indicator =
              context.getBean(EtcdDiscoveryHealthIndicator.class);

          await()
              .atMost(Duration.ofSeconds(20))
              .untilAsserted(
                  () -> {
                    Health health = indicator.health();
                    assertThat(health.getStatus()).isEqualTo(Status.UP);
                    assertThat(health.getDetails())
                        .containsEntry("connected", true)
                        .containsEntry("registrations", Map.of("engine-0", "waiting_for_kv_cache"));
                  });
        });
  }

  @Test
  void indicatorCanBeTurnedOff() {
    runner
        .withPropertyValues("management.health.kvbridge-etcd.enabled=false")
        .run(
            context ->
                assertThat(context)
                    .hasSingleBean(EtcdDiscovery.class)
                    .doesNotHaveBean(EtcdDiscoveryHealthIndicator.class));
  }

  private static boolean up(Health health) {
    return health.getStatus().equals(Status.UP);
  }
}
