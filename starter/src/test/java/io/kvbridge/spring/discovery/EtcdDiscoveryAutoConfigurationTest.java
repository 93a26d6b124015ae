package io.kvbridge.spring.discovery;

import static io.kvbridge.spring.StartupFailures.invalidProperty;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.kvbridge.discovery.etcd.EngineAttributes;
import io.kvbridge.discovery.etcd.EngineLoad;
import io.kvbridge.discovery.etcd.EngineRecord;
import io.kvbridge.discovery.etcd.EtcdDiscovery;
import io.kvbridge.discovery.etcd.testing.EtcdServer;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.PeerDirectory;
import io.kvbridge.spi.Role;
import io.kvbridge.spring.InvalidKvBridgePropertyException;
import io.kvbridge.spring.KvBridgeAutoConfiguration;
import io.kvbridge.spring.KvConnectors;
import io.kvbridge.spring.Leases;
import io.kvbridge.spring.PeerDiscovery;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;

/** Discovery on etcd is turned on by its endpoints, checked like every property, and wired in. */
class EtcdDiscoveryAutoConfigurationTest {

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  KvBridgeAutoConfiguration.class, EtcdDiscoveryAutoConfiguration.class));

  // ---------------------------------------------------------------- on only when asked

  @Test
  void discoveryIsOffWithoutEndpoints() {
    runner.run(
        context -> {
          assertThat(context).doesNotHaveBean(EtcdDiscovery.class);
          assertThat(context).doesNotHaveBean(PeerDiscovery.class);
          KvConnector connector = context.getBean(KvConnectors.class).create();
          assertThat(connector.settings().peerDirectory()).isSameAs(PeerDirectory.NONE);
        });
  }

  @Test
  void emptyEndpointsKeepDiscoveryOff() {
    runner
        .withPropertyValues("kvbridge.discovery.etcd.endpoints=")
        .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(EtcdDiscovery.class));
  }

  @Test
  void starterWithoutTheModuleRunsAsBeforeWhenEndpointsAreUnset() {
    runner
        .withClassLoader(new FilteredClassLoader(EtcdDiscovery.class))
        .run(
            context -> {
              assertThat(context).hasNotFailed().doesNotHaveBean(PeerDiscovery.class);
              assertThat(context.getBean(KvConnectors.class).create()).isNotNull();
            });
  }

  @Test
  void endpointsWithoutTheModuleStopStartUpSayingWhatIsMissing() {
    runner
        .withClassLoader(new FilteredClassLoader(EtcdDiscovery.class))
        .withPropertyValues("kvbridge.discovery.etcd.endpoints=http://127.0.0.1:2379")
        .run(
            context -> {
              InvalidKvBridgePropertyException e = invalidProperty(context);
              assertThat(e.property()).isEqualTo("kvbridge.discovery.etcd.endpoints");
              assertThat(e.getMessage())
                  .contains("discovery on etcd is not on the class path")
                  .contains("io.kvbridge:discovery-etcd");
            });
  }

  // ---------------------------------------------------------------- validation

  @Test
  void malformedEndpointStopsStartUpNamingThePropertyAndTheValue() {
    assertRejected(
        "kvbridge.discovery.etcd.endpoints",
        "kvbridge.discovery.etcd.endpoints 'etcd-1:2379' is not an etcd endpoint: write"
            + " http://host:port, e.g. http://127.0.0.1:2379 (TLS is not supported yet)",
        "kvbridge.discovery.etcd.endpoints=http://etcd-0:2379,etcd-1:2379");
  }

  @Test
  void ttlThatIsNotWholeSecondsStopsStartUp() {
    assertRejected(
        "kvbridge.discovery.etcd.ttl",
        "kvbridge.discovery.etcd.ttl (1500ms) must be a whole number of seconds, at least 1s"
            + " (etcd leases count in seconds), e.g. 5s",
        "kvbridge.discovery.etcd.endpoints=http://127.0.0.1:2379",
        "kvbridge.discovery.etcd.ttl=1500ms");
  }

  @Test
  void refreshIntervalThatIsNotPositiveStopsStartUp() {
    assertRejected(
        "kvbridge.discovery.etcd.refresh-interval",
        "kvbridge.discovery.etcd.refresh-interval (0s) must be positive, e.g. 1s",
        "kvbridge.discovery.etcd.endpoints=http://127.0.0.1:2379",
        "kvbridge.discovery.etcd.refresh-interval=0s");
  }

  @Test
  void malformedPrefixStopsStartUp() {
    runner
        .withPropertyValues(
            "kvbridge.discovery.etcd.endpoints=http://127.0.0.1:2379",
            "kvbridge.discovery.etcd.prefix=kvbridge/")
        .run(
            context ->
                assertThat(invalidProperty(context).getMessage())
                    .startsWith("kvbridge.discovery.etcd.prefix 'kvbridge/' is not a key prefix"));
  }

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

  // ---------------------------------------------------------------- wired into the connectors

  @Test
  void everyConnectorIsRegisteredAndFindsProducersThroughEtcd() {
    try (EtcdServer etcd = EtcdServer.start();
        Client raw = Client.builder().endpoints(etcd.endpoint()).build()) {
      runner
          .withPropertyValues(
              "kvbridge.discovery.etcd.endpoints[0]=" + etcd.endpoint(),
              "kvbridge.discovery.etcd.ttl=1s",
              "kvbridge.fake.fabric=etcd-wiring")
          .withBean(EngineLoad.class, () -> engineId -> OptionalInt.of(engineId.length()))
          .withBean(EngineAttributes.class, () -> engineId -> Map.of("base_url", "http://p:1"))
          .run(
              context -> {
                KvConnectors connectors = context.getBean(KvConnectors.class);
                EtcdDiscovery discovery = context.getBean(EtcdDiscovery.class);
                KvConnector producer =
                    Leases.registered(connectors.create("prefill-e", Role.PRODUCER));
                KvConnector consumer = connectors.create("decode-e", Role.CONSUMER);

                EngineRecord record = awaitRecord(raw, "/kvbridge/engines/prefill-e");
                assertThat(record.handshakeAddress())
                    .isEqualTo(producer.status().producer().orElseThrow().handshakeAddress());
                assertThat(record.freeBlocks()).hasValue("prefill-e".length());
                assertThat(record.attribute("base_url")).contains("http://p:1");
                assertThat(consumer.settings().peerDirectory()).isSameAs(discovery);
                await()
                    .atMost(Duration.ofSeconds(20))
                    .until(() -> discovery.handshakeAddress("prefill-e").isPresent());
                assertThat(discovery.handshakeAddress("prefill-e"))
                    .isEqualTo(producer.status().producer().orElseThrow().handshakeAddress());
              });
    }
  }

  @Test
  void closingTheApplicationRemovesItsEnginesRegistrations() {
    try (EtcdServer etcd = EtcdServer.start();
        Client raw = Client.builder().endpoints(etcd.endpoint()).build()) {
      ConfigurableApplicationContext[] closed = new ConfigurableApplicationContext[1];
      runner
          .withPropertyValues(
              "kvbridge.discovery.etcd.endpoints=" + etcd.endpoint(),
              "kvbridge.fake.fabric=etcd-closing")
          .run(
              context -> {
                Leases.registered(context.getBean(KvConnectors.class).create());
                awaitRecord(raw, "/kvbridge/engines/engine-0");
                closed[0] = context.getSourceApplicationContext();
              });

      assertThat(closed[0].isActive()).isFalse();
      assertThat(read(raw, "/kvbridge/engines/engine-0")).isEmpty();
    }
  }

  private static EngineRecord awaitRecord(Client raw, String key) {
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> read(raw, key).isPresent());
    KeyValue kv = read(raw, key).orElseThrow();
    return EngineRecord.fromJson(key.substring(key.lastIndexOf('/') + 1), kv.getValue().getBytes());
  }

  private static Optional<KeyValue> read(Client raw, String key) {
    try {
      List<KeyValue> kvs =
          raw.getKVClient()
              .get(ByteSequence.from(key, StandardCharsets.UTF_8))
              .get(5, TimeUnit.SECONDS)
              .getKvs();
      return kvs.stream().findFirst();
    } catch (Exception e) {
      throw new IllegalStateException("etcd did not answer the test's request", e);
    }
  }
}
