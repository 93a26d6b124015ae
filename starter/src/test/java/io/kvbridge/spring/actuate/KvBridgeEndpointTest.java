package io.kvbridge.spring.actuate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.events.PrefixIndex;
import io.kvbridge.events.PrefixIndex.Outcome;
import io.kvbridge.lease.EndReason;
import io.kvbridge.net.DropReason;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.spi.ConnectorStatus;
import io.kvbridge.spi.ConsumerStatus;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.PeerStatus;
import io.kvbridge.spi.ProducerStatus;
import io.kvbridge.spi.Role;
import io.kvbridge.spring.KvBridgeAutoConfiguration;
import io.kvbridge.spring.KvConnectors;
import io.kvbridge.spring.Leases;
import io.kvbridge.spring.StubKvConnectors;
import io.kvbridge.spring.UnavailableTransportProvider;
import io.kvbridge.spring.actuate.KvBridgeEndpoint.KvBridgeDescriptor;
import io.kvbridge.spring.events.PrefixIndexStatus;
import io.kvbridge.spring.events.PrefixIndexView;
import io.kvbridge.time.ManualClock;
import io.kvbridge.wire.Handshake;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
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

  private static final PrefixIndexStatus PREFIX_INDEX =
      PrefixIndexStatus.of(
          new PrefixIndex.Stats(Map.of(Outcome.APPLIED, 40L, Outcome.GAP, 1L), 2, 1200, 3),
          4,
          5,
          6,
          100,
          60);

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
              .extracting(ConnectorStatus::engineId)
              .containsExactly("prefill-e", "decode-e");
          ConnectorStatus p = descriptor.connectors().get(0);
          assertThat(p.role()).isEqualTo(Role.PRODUCER);
          assertThat(p.rejected())
              .hasSize(RejectedInput.values().length)
              .allSatisfy((kind, count) -> assertThat(count).isZero());
          ProducerStatus leases = p.producer().orElseThrow();
          assertThat(leases.handshakeAddress()).contains("local://prefill-e");
          assertThat(leases.liveLeases()).isEqualTo(1);
          assertThat(leases.soonestExpiry()).contains(Duration.ofSeconds(20));
          assertThat(leases.leasesGranted()).isEqualTo(3);
          assertThat(leases.leasesEnded())
              .containsExactly(
                  Map.entry(EndReason.READ, 1L),
                  Map.entry(EndReason.EXPIRED, 0L),
                  Map.entry(EndReason.REVOKED, 1L),
                  Map.entry(EndReason.RELEASED, 0L));
          assertThat(leases.consumers()).containsExactly("decode-e");
          ConnectorStatus c = descriptor.connectors().get(1);
          assertThat(c.role()).isEqualTo(Role.CONSUMER);
          assertThat(c.producer()).isEmpty();
          ConsumerStatus loads = c.consumer().orElseThrow();
          assertThat(loads.producers())
              .extracting(PeerStatus::engineId)
              .containsExactly("prefill-e");
          assertThat(loads.readsCompleted()).isEqualTo(1);
          assertThat(loads.bytesRead())
              .isEqualTo(Leases.BLOCKS.size() * Leases.LAYOUT.blockBytes());
          assertThat(loads.loadsInFlight()).isZero();
          assertThat(loads.loadsFailed()).isZero();
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
                    return producer.status().producer().orElseThrow().heartbeatsRenewed() > 0;
                  });

          ProducerStatus p =
              context
                  .getBean(KvBridgeEndpoint.class)
                  .kvbridge()
                  .connectors()
                  .get(0)
                  .producer()
                  .orElseThrow();
          assertThat(p.heartbeatsRenewed()).isEqualTo(1);
          assertThat(p.heartbeatsIgnored()).isZero();
        });
  }

  @Test
  void droppedHandshakeConnectionsAppearOnTheProducer() {
    exposed
        .withPropertyValues("kvbridge.handshake.address=tcp://127.0.0.1:0")
        .run(
            context -> {
              KvConnector producer =
                  Leases.registered(
                      context.getBean(KvConnectors.class).create("prefill-d", Role.PRODUCER));
              URI address =
                  URI.create(
                      producer.status().producer().orElseThrow().handshakeAddress().orElseThrow());

              try (Socket socket = new Socket(address.getHost(), address.getPort())) {
                socket.setSoTimeout(20_000);
                DataInputStream in = new DataInputStream(socket.getInputStream());
                in.readFully(new byte[in.readInt()]); // the greeting
                new DataOutputStream(socket.getOutputStream())
                    .writeInt(Handshake.MAX_FRAME_BYTES + 1);
                assertThat(in.read()).as("the server closes the connection").isEqualTo(-1);
              }

              await()
                  .atMost(Duration.ofSeconds(20))
                  .untilAsserted(
                      () ->
                          assertThat(
                                  context
                                      .getBean(KvBridgeEndpoint.class)
                                      .kvbridge()
                                      .connectors()
                                      .get(0)
                                      .producer()
                                      .orElseThrow()
                                      .droppedConnections())
                              .containsEntry(DropReason.FRAME_REFUSED, 1L)
                              .containsEntry(DropReason.DEADLINE_PASSED, 0L));
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
                  "\"role\":\"producer\"",
                  "\"soonestExpiry\":\"PT30S\"",
                  "\"leasesEnded\":{\"READ\":0,\"EXPIRED\":0,\"REVOKED\":0,\"RELEASED\":0}",
                  "\"droppedConnections\":{\"DEADLINE_PASSED\":0,\"ADDRESS_LIMIT\":0,"
                      + "\"TOTAL_LIMIT\":0,\"FRAME_REFUSED\":0,\"EVICTED\":0}",
                  "\"consumer\":null",
                  "\"prefixIndex\":null");
        });
  }

  @Test
  void endpointIncludesThePrefixIndexOfTheApplicationsView() {
    exposed
        .withBean(PrefixIndexView.class, () -> () -> PREFIX_INDEX)
        .run(
            context ->
                assertThat(context.getBean(KvBridgeEndpoint.class).kvbridge().prefixIndex())
                    .isEqualTo(PREFIX_INDEX));
  }

  @Test
  void endpointReadsTheViewAgainOnEachRead() {
    AtomicReference<PrefixIndexStatus> current = new AtomicReference<>(PREFIX_INDEX);
    PrefixIndexStatus later =
        PrefixIndexStatus.of(new PrefixIndex.Stats(Map.of(), 0, 0, 0), 0, 0, 0, 101, 61);
    exposed
        .withBean(PrefixIndexView.class, () -> current::get)
        .run(
            context -> {
              KvBridgeEndpoint endpoint = context.getBean(KvBridgeEndpoint.class);
              assertThat(endpoint.kvbridge().prefixIndex()).isEqualTo(PREFIX_INDEX);

              current.set(later);

              assertThat(endpoint.kvbridge().prefixIndex()).isEqualTo(later);
            });
  }

  @Test
  void endpointHasNoPrefixIndexWithoutAView() {
    exposed.run(
        context ->
            assertThat(context.getBean(KvBridgeEndpoint.class).kvbridge().prefixIndex()).isNull());
  }

  @Test
  void endpointTakesThePrimaryViewAmongSeveral() {
    PrefixIndexStatus other =
        PrefixIndexStatus.of(new PrefixIndex.Stats(Map.of(), 0, 0, 0), 0, 0, 0, 0, 0);
    exposed
        .withBean("other", PrefixIndexView.class, () -> () -> other)
        .withBean(
            "primary", PrefixIndexView.class, () -> () -> PREFIX_INDEX, b -> b.setPrimary(true))
        .run(
            context ->
                assertThat(context.getBean(KvBridgeEndpoint.class).kvbridge().prefixIndex())
                    .isEqualTo(PREFIX_INDEX));
  }

  @Test
  void thePrefixIndexIsPlainJsonWithEveryOutcomeByName() {
    exposed
        .withBean(PrefixIndexView.class, () -> () -> PREFIX_INDEX)
        .run(
            context -> {
              String json =
                  JsonMapper.builder()
                      .build()
                      .writeValueAsString(context.getBean(KvBridgeEndpoint.class).kvbridge());

              assertThat(json)
                  .contains(
                      "\"prefixIndex\":{\"blocks\":1200,\"engines\":3,\"offered\":{"
                          + "\"APPLIED\":40,\"REPEATED\":0,\"GAP\":1,\"UNKNOWN_ENGINE\":0,"
                          + "\"WRONG_INCARNATION\":0,\"NOT_SYNCED\":0,\"WRONG_MODEL\":0},"
                          + "\"resyncs\":2,\"refused\":4,\"unauthenticated\":5,"
                          + "\"unreachable\":6,\"requests\":100,\"cacheRouted\":60}");
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
