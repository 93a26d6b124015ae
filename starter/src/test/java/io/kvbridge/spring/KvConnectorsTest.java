package io.kvbridge.spring;

import static io.kvbridge.spring.StartupFailures.causeOfType;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import io.kvbridge.lease.EndReason;
import io.kvbridge.lease.Lease;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.runtime.ConnectorRegistry;
import io.kvbridge.spi.Availability;
import io.kvbridge.spi.ConnectorUnavailableException;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.Role;
import io.kvbridge.time.ManualClock;
import io.kvbridge.time.MonotonicClock;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

class KvConnectorsTest {

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(KvBridgeAutoConfiguration.class));

  @Test
  void fakeConnectorIsSelectedByDefault() {
    runner.run(
        context ->
            assertThat(context.getBean(KvConnectors.class).provider().type()).isEqualTo("fake"));
  }

  @Test
  void createUsesTheConfiguredEngineIdAndRole() {
    runner
        .withPropertyValues("kvbridge.engine-id=prefill-3", "kvbridge.role=producer")
        .run(
            context -> {
              KvConnector connector = context.getBean(KvConnectors.class).create();
              assertThat(connector.settings().engineId()).isEqualTo("prefill-3");
              assertThat(connector.settings().role()).isEqualTo(Role.PRODUCER);
            });
  }

  @Test
  void createForAnotherEngineOverridesOnlyEngineIdAndRole() {
    runner
        .withPropertyValues("kvbridge.lease.duration=12s", "kvbridge.lease.heartbeat-interval=2s")
        .run(
            context -> {
              KvConnector connector =
                  context.getBean(KvConnectors.class).create("decode-1", Role.CONSUMER);
              assertThat(connector.settings().engineId()).isEqualTo("decode-1");
              assertThat(connector.settings().role()).isEqualTo(Role.CONSUMER);
              assertThat(connector.settings().leaseTerms().duration()).hasSeconds(12);
            });
  }

  @Test
  void createWithRanksGivesTheEngineAWorkerSidePerRank() {
    runner.run(
        context -> {
          KvConnector connector =
              context.getBean(KvConnectors.class).create("decode-tp", Role.CONSUMER, 2);
          assertThat(connector.settings().tpDegree()).isEqualTo(2);
          assertThat(connector.worker(1)).isNotSameAs(connector.worker(0));
        });
  }

  @Test
  void createWithRanksOutsideOneTo255IsRefusedNamingTheEngine() {
    runner.run(
        context ->
            assertThatIllegalArgumentException()
                .isThrownBy(
                    () -> context.getBean(KvConnectors.class).create("decode-x", Role.CONSUMER, 0))
                .withMessageContaining("engine decode-x")
                .withMessageContaining("1 to 255 tensor-parallel ranks, got 0"));
  }

  @Test
  void allListsTheLiveConnectorsInCreationOrder() {
    runner.run(
        context -> {
          KvConnectors connectors = context.getBean(KvConnectors.class);
          KvConnector prefill = connectors.create("prefill-0", Role.PRODUCER);
          KvConnector decode = connectors.create("decode-0", Role.CONSUMER);
          assertThat(connectors.all()).containsExactly(prefill, decode);
        });
  }

  @Test
  void closedConnectorLeavesAll() {
    runner.run(
        context -> {
          KvConnectors connectors = context.getBean(KvConnectors.class);
          KvConnector prefill = connectors.create("prefill-0", Role.PRODUCER);
          KvConnector decode = connectors.create("decode-0", Role.CONSUMER);
          prefill.close();
          assertThat(connectors.all()).containsExactly(decode);
        });
  }

  @Test
  void secondLiveConnectorForOneEngineIdIsRefused() {
    runner.run(
        context -> {
          KvConnectors connectors = context.getBean(KvConnectors.class);
          connectors.create("prefill-0", Role.PRODUCER);
          assertThatIllegalStateException()
              .isThrownBy(() -> connectors.create("prefill-0", Role.CONSUMER))
              .withMessageContaining("engine id 'prefill-0' already has a live connector");
        });
  }

  @Test
  void engineIdIsFreeAgainOnceItsConnectorIsClosed() {
    runner.run(
        context -> {
          KvConnectors connectors = context.getBean(KvConnectors.class);
          connectors.create("prefill-0", Role.PRODUCER).close();
          assertThat(connectors.create("prefill-0", Role.PRODUCER).settings().engineId())
              .isEqualTo("prefill-0");
        });
  }

  @Test
  void closingTheContextClosesEveryConnectorAndRevokesItsLeases() {
    AtomicReference<KvConnector> created = new AtomicReference<>();
    runner.run(
        context -> {
          KvConnector connector = Leases.registered(context.getBean(KvConnectors.class).create());
          Leases.grant(connector, "r-1");
          created.set(connector);
        });
    assertThat(created.get().status().producer().orElseThrow().liveLeases()).isZero();
    assertThat(created.get().status().producer().orElseThrow().leasesEnded())
        .containsEntry(EndReason.REVOKED, 1L);
  }

  @Test
  void noConnectorIsCreatedOnceTheContextIsClosed() {
    AtomicReference<KvConnectors> connectors = new AtomicReference<>();
    runner.run(context -> connectors.set(context.getBean(KvConnectors.class)));
    assertThatIllegalStateException()
        .isThrownBy(() -> connectors.get().create())
        .withMessageContaining("the application context is closing");
  }

  @Test
  void systemClockIsUsedWhenTheApplicationDefinesNone() {
    runner.run(
        context ->
            assertThat(context.getBean(KvConnectors.class).create().settings().clock())
                .isSameAs(MonotonicClock.SYSTEM));
  }

  @Test
  void applicationClockIsUsedWhenDefined() {
    ManualClock clock = new ManualClock();
    runner
        .withBean(ManualClock.class, () -> clock)
        .run(
            context ->
                assertThat(context.getBean(KvConnectors.class).create().settings().clock())
                    .isSameAs(clock));
  }

  @Test
  void everyObserverFactoryObservesTheConnectorsEvents() {
    runner
        .withUserConfiguration(RecordingObservers.class)
        .run(
            context -> {
              KvConnector connector =
                  Leases.registered(context.getBean(KvConnectors.class).create());
              Leases.grant(connector, "r-1");
              assertThat(context.getBean(RecordingObservers.class).granted)
                  .extracting(Lease::requestId)
                  .containsExactly("r-1", "r-1");
            });
  }

  @Test
  void unavailableConnectorStopsStartUpWithItsReasonAndTheProperty() {
    runner
        .withPropertyValues("kvbridge.connector.type=unavailable")
        .run(
            context ->
                assertThat(causeOfType(context, ConnectorUnavailableException.class))
                    .hasMessage(
                        "connector 'unavailable' cannot run here: "
                            + UnavailableTransportProvider.REASON
                            + "; make it available on this machine or set kvbridge.connector.type"
                            + " to another type (known types: fake, unavailable)")
                    .hasCauseInstanceOf(UnsatisfiedLinkError.class));
  }

  @Test
  void availabilityIsDecidedWithTheConfiguredConnectorProperties() {
    runner
        .withPropertyValues(
            "kvbridge.connector.type=unavailable", "kvbridge.unavailable.installed=true")
        .run(
            context ->
                assertThat(context.getBean(KvConnectors.class).availability())
                    .isInstanceOf(Availability.Available.class));
  }

  @Test
  void applicationRegistryReplacesDiscovery() {
    runner
        .withBean(
            ConnectorRegistry.class,
            () -> ConnectorRegistry.of(List.of(new UnavailableTransportProvider())))
        .run(
            context ->
                assertThat(StartupFailures.invalidProperty(context))
                    .hasMessageContaining("'fake' is unknown; known types: unavailable"));
  }

  @Test
  void applicationKvConnectorsReplacesTheDefault() {
    KvConnectors own = new StubKvConnectors(new UnavailableTransportProvider());
    runner
        .withBean(KvConnectors.class, () -> own)
        .run(context -> assertThat(context.getBean(KvConnectors.class)).isSameAs(own));
  }

  /** Two factories, each recording the leases granted to its observer. */
  @Configuration(proxyBeanMethods = false)
  static class RecordingObservers {
    final List<Lease> granted = new CopyOnWriteArrayList<>();

    @Bean
    ConnectorObserverFactory first() {
      return settings -> observer();
    }

    @Bean
    ConnectorObserverFactory second() {
      return settings -> observer();
    }

    private ConnectorObserver observer() {
      return new ConnectorObserver() {
        @Override
        public void granted(Lease lease) {
          granted.add(lease);
        }
      };
    }
  }
}
