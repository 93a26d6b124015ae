package io.kvbridge.spring.actuate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.observe.RejectedInput;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.Role;
import io.kvbridge.spring.KvBridgeAutoConfiguration;
import io.kvbridge.spring.KvConnectors;
import io.kvbridge.spring.Leases;
import io.kvbridge.spring.StubKvConnectors;
import io.kvbridge.spring.UnavailableTransportProvider;
import io.kvbridge.spring.actuate.KvBridgeEndpoint.ConnectorDescriptor;
import io.kvbridge.spring.actuate.KvBridgeEndpoint.KvBridgeDescriptor;
import io.kvbridge.time.ManualClock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import tools.jackson.databind.json.JsonMapper;

class KvBridgeEndpointTest {

  private final ManualClock clock = new ManualClock();

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  KvBridgeAutoConfiguration.class, KvBridgeEndpointAutoConfiguration.class))
          .withBean(ManualClock.class, () -> clock);

  private final ApplicationContextRunner exposed =
      runner.withPropertyValues("management.endpoints.web.exposure.include=kvbridge");

  @Test
  void endpointDescribesTheProviderAndEveryConnector() {
    exposed.run(
        context -> {
          KvConnectors connectors = context.getBean(KvConnectors.class);
          KvConnector producer = Leases.registered(connectors.create("prefill-e", Role.PRODUCER));
          KvConnector consumer = Leases.registered(connectors.create("decode-e", Role.CONSUMER));
          Leases.read(producer, consumer, "r-1");
          Leases.grant(producer, "r-2");
          Leases.grant(producer, "r-3");
          producer.scheduler().revoke("r-3", "client went away");
          clock.advance(Duration.ofSeconds(10));

          KvBridgeDescriptor descriptor = context.getBean(KvBridgeEndpoint.class).kvbridge();

          assertThat(descriptor.connectorType()).isEqualTo("fake");
          assertThat(descriptor.availability())
              .isEqualTo(new KvBridgeEndpoint.ProviderAvailability(true, null));
          assertThat(descriptor.connectors())
              .extracting(ConnectorDescriptor::engineId)
              .containsExactly("prefill-e", "decode-e");
          ConnectorDescriptor p = descriptor.connectors().get(0);
          assertThat(p.role()).isEqualTo("producer");
          assertThat(p.handshakeAddress()).isEqualTo("local://prefill-e");
          assertThat(p.liveLeases()).isEqualTo(1);
          assertThat(p.soonestExpiry()).isEqualTo("PT20S");
          assertThat(p.leasesGranted()).isEqualTo(3);
          assertThat(p.leasesEnded())
              .containsExactly(
                  Map.entry("READ", 1L),
                  Map.entry("EXPIRED", 0L),
                  Map.entry("REVOKED", 1L),
                  Map.entry("RELEASED", 0L));
          assertThat(p.rejected())
              .hasSize(RejectedInput.values().length)
              .allSatisfy((kind, count) -> assertThat(count).isZero());
          assertThat(p.knownPeers()).containsExactly("decode-e");
          ConnectorDescriptor c = descriptor.connectors().get(1);
          assertThat(c.role()).isEqualTo("consumer");
          assertThat(c.knownPeers()).containsExactly("prefill-e");
          assertThat(c.readsCompleted()).isEqualTo(1);
          assertThat(c.bytesRead()).isEqualTo(Leases.BLOCKS.size() * Leases.LAYOUT.blockBytes());
          assertThat(c.loadsInFlight()).isZero();
          assertThat(c.loadsFailed()).isZero();
          assertThat(c.soonestExpiry()).isNull();
        });
  }

  @Test
  void heartbeatCountsAppearOnTheProducer() {
    exposed.run(
        context -> {
          KvConnectors connectors = context.getBean(KvConnectors.class);
          KvConnector producer = Leases.registered(connectors.create("prefill-b", Role.PRODUCER));
          KvConnector consumer = Leases.registered(connectors.create("decode-b", Role.CONSUMER));
          Leases.read(producer, consumer, "r-1");
          Leases.accept(producer, consumer, "r-2", Leases.grant(producer, "r-2"));
          clock.advance(Duration.ofSeconds(5)); // one heartbeat interval
          consumer.worker().sweep(); // sends the heartbeats that are due
          await()
              .atMost(Duration.ofSeconds(20))
              .until(
                  () -> {
                    producer.worker().sweep();
                    return producer.status().heartbeatsRenewed() > 0;
                  });

          ConnectorDescriptor p =
              context.getBean(KvBridgeEndpoint.class).kvbridge().connectors().get(0);
          assertThat(p.heartbeatsRenewed()).isEqualTo(1);
          assertThat(p.heartbeatsIgnored()).isZero();
        });
  }

  @Test
  void endpointResponseIsPlainJson() {
    exposed.run(
        context -> {
          KvConnector producer =
              Leases.registered(
                  context.getBean(KvConnectors.class).create("prefill-j", Role.PRODUCER));
          Leases.grant(producer, "r-1");

          String json =
              JsonMapper.builder()
                  .build()
                  .writeValueAsString(context.getBean(KvBridgeEndpoint.class).kvbridge());

          assertThat(json)
              .contains(
                  "\"connectorType\":\"fake\"",
                  "\"availability\":{\"available\":true,\"reason\":null}",
                  "\"engineId\":\"prefill-j\"",
                  "\"soonestExpiry\":\"PT30S\"",
                  "\"leasesEnded\":{\"READ\":0,\"EXPIRED\":0,\"REVOKED\":0,\"RELEASED\":0}");
        });
  }

  @Test
  void endpointReportsAProviderThatCannotRun() {
    exposed
        .withBean(
            KvConnectors.class, () -> new StubKvConnectors(new UnavailableTransportProvider()))
        .run(
            context -> {
              KvBridgeDescriptor descriptor = context.getBean(KvBridgeEndpoint.class).kvbridge();
              assertThat(descriptor.connectorType()).isEqualTo("unavailable");
              assertThat(descriptor.availability().available()).isFalse();
              assertThat(descriptor.availability().reason())
                  .isEqualTo(UnavailableTransportProvider.REASON);
              assertThat(descriptor.connectors()).isEqualTo(List.of());
            });
  }

  @Test
  void endpointIsLeftOutUnlessExposed() {
    runner.run(context -> assertThat(context).doesNotHaveBean(KvBridgeEndpoint.class));
  }

  @Test
  void endpointIsLeftOutWhenAccessIsNone() {
    exposed
        .withPropertyValues("management.endpoint.kvbridge.access=NONE")
        .run(context -> assertThat(context).doesNotHaveBean(KvBridgeEndpoint.class));
  }

  @Test
  void endpointIsLeftOutWithoutActuatorOnTheClassPath() {
    exposed
        .withClassLoader(new FilteredClassLoader(Endpoint.class))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).doesNotHaveBean(KvBridgeEndpoint.class);
              assertThat(context).hasSingleBean(KvConnectors.class);
            });
  }
}
