package io.kvbridge.spring.scheduling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.lease.EndReason;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.Role;
import io.kvbridge.spring.KvBridgeAutoConfiguration;
import io.kvbridge.spring.KvConnectors;
import io.kvbridge.spring.Leases;
import io.kvbridge.spring.StubKvConnectors;
import io.kvbridge.spring.UnavailableTransportProvider;
import io.kvbridge.time.ManualClock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration;
import org.springframework.boot.task.ThreadPoolTaskSchedulerCustomizer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

class ConnectorMaintenanceTest {

  private static final Duration PATIENCE = Duration.ofSeconds(20);

  private final ManualClock clock = new ManualClock();

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  KvBridgeAutoConfiguration.class, KvBridgeSchedulingAutoConfiguration.class))
          .withBean(ManualClock.class, () -> clock)
          .withPropertyValues(
              "kvbridge.lease.sweep-interval=10ms", "kvbridge.lease.heartbeat-interval=10ms");

  @Test
  void expiredLeaseIsEndedByTheScheduledSweepWithoutAnyEngineCall() {
    runner.run(
        context -> {
          KvConnector producer = Leases.registered(context.getBean(KvConnectors.class).create());
          Leases.grant(producer, "r-1");

          clock.advance(Duration.ofSeconds(31));

          await()
              .atMost(PATIENCE)
              .untilAsserted(
                  () -> {
                    assertThat(producer.status().producer().orElseThrow().liveLeases()).isZero();
                    assertThat(producer.status().producer().orElseThrow().leasesEnded())
                        .containsEntry(EndReason.EXPIRED, 1L);
                  });
        });
  }

  @Test
  void scheduledHeartbeatsRenewTheLeasesAConsumerStillMeansToRead() {
    runner.run(
        context -> {
          KvConnectors connectors = context.getBean(KvConnectors.class);
          KvConnector producer = Leases.registered(connectors.create("prefill-hb", Role.PRODUCER));
          KvConnector consumer = Leases.registered(connectors.create("decode-hb", Role.CONSUMER));
          Leases.read(producer, consumer, "handshake-first");
          Leases.accept(producer, consumer, "r-1", Leases.grant(producer, "r-1"));

          clock.advance(Duration.ofSeconds(10));

          // Both at once: a lease the producer confirms only after the clock moved also expires
          // 30 s from then, with no heartbeat yet.
          await()
              .atMost(PATIENCE)
              .untilAsserted(
                  () -> {
                    var status = producer.status().producer().orElseThrow();
                    assertThat(status.heartbeatsRenewed()).isPositive();
                    assertThat(status.soonestExpiry()).contains(Duration.ofSeconds(30));
                  });
        });
  }

  @Test
  void maintenanceRunsWithoutTheApplicationEnablingScheduling() {
    runner.run(
        context -> {
          assertThat(context).doesNotHaveBean(TaskScheduler.class);
          assertThat(context.getBean(ConnectorMaintenance.class).isRunning()).isTrue();
        });
  }

  @Test
  void maintenanceStopsWhenTheContextCloses() {
    AtomicReference<ConnectorMaintenance> maintenance = new AtomicReference<>();
    runner.run(context -> maintenance.set(context.getBean(ConnectorMaintenance.class)));
    assertThat(maintenance.get().isRunning()).isFalse();
  }

  @Test
  void maintenanceIsLeftOutWithoutKvConnectors() {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(KvBridgeSchedulingAutoConfiguration.class))
        .run(context -> assertThat(context).doesNotHaveBean(ConnectorMaintenance.class));
  }

  @Test
  void schedulerIsBuiltWithTheApplicationsSchedulerBuilderWhenThereIsOne() {
    AtomicBoolean customized = new AtomicBoolean();
    runner
        .withConfiguration(AutoConfigurations.of(TaskSchedulingAutoConfiguration.class))
        .withBean(ThreadPoolTaskSchedulerCustomizer.class, () -> scheduler -> customized.set(true))
        .run(
            context -> {
              assertThat(context.getBean(ConnectorMaintenance.class).isRunning()).isTrue();
              assertThat(customized).isTrue();
            });
  }

  @Test
  void scheduledTicksRunOnKvbridgeThreads() {
    StubConnector connector = StubConnector.counting("prefill-0", Role.PRODUCER);
    runner
        .withBean(KvConnectors.class, () -> stub(connector))
        .run(
            context -> {
              await().atMost(PATIENCE).until(() -> connector.sweeps.get() >= 1);
              assertThat(connector.threads).allMatch(name -> name.startsWith("kvbridge-"));
            });
  }

  @Test
  void failingConnectorDoesNotKeepOthersFromBeingSwept() {
    StubConnector broken = StubConnector.failing("prefill-0", Role.PRODUCER);
    StubConnector healthy = StubConnector.counting("prefill-1", Role.PRODUCER);

    maintenance(broken, healthy).sweepAll();

    assertThat(broken.sweeps).hasValue(1);
    assertThat(healthy.sweeps).hasValue(1);
  }

  @Test
  void scheduleGoesOnAfterAConnectorFails() {
    StubConnector broken = StubConnector.failing("prefill-0", Role.BOTH);
    ConnectorMaintenance maintenance = maintenance(broken);
    maintenance.start();
    try {
      await().atMost(PATIENCE).until(() -> broken.sweeps.get() >= 3);
    } finally {
      maintenance.stop();
    }
  }

  private static KvConnectors stub(KvConnector... connectors) {
    return new StubKvConnectors(new UnavailableTransportProvider(), List.of(connectors));
  }

  private static ConnectorMaintenance maintenance(KvConnector... connectors) {
    return new ConnectorMaintenance(
        stub(connectors), Duration.ofMillis(5), ThreadPoolTaskScheduler::new);
  }
}
