package io.kvbridge.spring.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.Role;
import io.kvbridge.spring.KvBridgeAutoConfiguration;
import io.kvbridge.spring.KvConnectors;
import io.kvbridge.spring.Leases;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class KvBridgeMetricsAutoConfigurationTest {

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  KvBridgeAutoConfiguration.class, KvBridgeMetricsAutoConfiguration.class));

  private final ApplicationContextRunner withRegistry =
      runner.withBean(SimpleMeterRegistry.class, SimpleMeterRegistry::new);

  @Test
  void grantedAndEndedLeasesAreRecorded() {
    withRegistry.run(
        context -> {
          KvConnector producer = Leases.registered(context.getBean(KvConnectors.class).create());
          Leases.grant(producer, "r-1");
          Leases.grant(producer, "r-2");
          producer.scheduler().revoke("r-1", "client went away");

          MeterRegistry registry = context.getBean(MeterRegistry.class);
          assertThat(
                  registry
                      .get("kvbridge.leases.granted")
                      .tag("engine", "engine-0")
                      .counter()
                      .count())
              .isEqualTo(2);
          assertThat(
                  registry
                      .get("kvbridge.leases.ended")
                      .tag("engine", "engine-0")
                      .tag("reason", "revoked")
                      .counter()
                      .count())
              .isEqualTo(1);
          assertThat(registry.get("kvbridge.leases.active").gauge().value()).isEqualTo(1);
        });
  }

  @Test
  void validatedReadIsRecordedOnTheConsumerAndTheLeaseEndsAsReadOnTheProducer() {
    withRegistry.run(
        context -> {
          KvConnectors connectors = context.getBean(KvConnectors.class);
          KvConnector producer = Leases.registered(connectors.create("prefill-m", Role.PRODUCER));
          KvConnector consumer = Leases.registered(connectors.create("decode-m", Role.CONSUMER));

          Leases.read(producer, consumer, "r-1");

          MeterRegistry registry = context.getBean(MeterRegistry.class);
          assertThat(
                  registry
                      .get("kvbridge.transfer.duration")
                      .tag("engine", "decode-m")
                      .timer()
                      .count())
              .isEqualTo(1);
          assertThat(
                  registry
                      .get("kvbridge.transfer.bytes")
                      .tag("engine", "decode-m")
                      .summary()
                      .totalAmount())
              .isEqualTo(Leases.BLOCKS.size() * Leases.LAYOUT.blockBytes());
          assertThat(
                  registry
                      .get("kvbridge.leases.ended")
                      .tag("engine", "prefill-m")
                      .tag("reason", "read")
                      .counter()
                      .count())
              .isEqualTo(1);
        });
  }

  @Test
  void connectorCreatedAgainForAnEngineSharesItsMeters() {
    withRegistry.run(
        context -> {
          KvConnectors connectors = context.getBean(KvConnectors.class);
          Leases.grant(Leases.registered(connectors.create()), "r-1");
          connectors.all().forEach(KvConnector::close);
          Leases.grant(Leases.registered(connectors.create()), "r-2");

          MeterRegistry registry = context.getBean(MeterRegistry.class);
          assertThat(registry.get("kvbridge.leases.granted").counter().count()).isEqualTo(2);
          assertThat(registry.get("kvbridge.leases.active").gauge().value()).isEqualTo(1);
        });
  }

  @Test
  void metricsAreLeftOutWithoutAMeterRegistry() {
    runner.run(
        context -> {
          assertThat(context).doesNotHaveBean(MicrometerConnectorObservers.class);
          assertThat(context.getBean(KvConnectors.class).create()).isNotNull();
        });
  }

  @Test
  void connectorsWorkWithoutMicrometerOnTheClassPath() {
    runner
        .withClassLoader(new FilteredClassLoader(MeterRegistry.class))
        .run(
            context -> {
              assertThat(context).doesNotHaveBean(MicrometerConnectorObservers.class);
              assertThat(context.getBean(KvConnectors.class).create()).isNotNull();
            });
  }

  @Test
  void metricsFollowBootsOwnMeterRegistry() {
    new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                MetricsAutoConfiguration.class,
                CompositeMeterRegistryAutoConfiguration.class,
                SimpleMetricsExportAutoConfiguration.class,
                KvBridgeAutoConfiguration.class,
                KvBridgeMetricsAutoConfiguration.class))
        .run(
            context -> {
              Leases.grant(Leases.registered(context.getBean(KvConnectors.class).create()), "r-1");
              assertThat(
                      context
                          .getBean(MeterRegistry.class)
                          .get("kvbridge.leases.granted")
                          .counter()
                          .count())
                  .isEqualTo(1);
            });
  }
}
