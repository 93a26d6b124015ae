package io.kvbridge.sample.router;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.PutOption;
import io.kvbridge.discovery.etcd.EngineRecord;
import io.kvbridge.discovery.etcd.testing.EtcdServer;
import io.kvbridge.sample.HttpApi;
import io.kvbridge.sample.SampleApplication;
import io.kvbridge.sample.engine.ToyModel;
import io.kvbridge.sample.node.NodeRegistrations;
import io.kvbridge.spi.Role;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.json.JsonMapper;

/**
 * A router whose pools come from etcd: a real etcd on loopback, a router and nodes each an
 * application of its own in this JVM (profiles {@code router}, {@code prefill}, {@code decode}),
 * the nodes moving KV through one shared-directory fabric and registering in etcd with their URLs.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PoolsFromEtcdTest {

  private static final ToyModel REFERENCE = ToyModel.standard();

  private final List<ConfigurableApplicationContext> apps = new ArrayList<>();
  private EtcdServer etcd;
  private Client raw;
  private Path fabric;
  private ConfigurableApplicationContext router;
  private ConfigurableApplicationContext p1;
  private ConfigurableApplicationContext d1;

  @BeforeAll
  void start(@TempDir Path fabricDir) {
    etcd = EtcdServer.start();
    raw = Client.builder().endpoints(etcd.endpoint()).build();
    fabric = fabricDir;
    router =
        app(
            "router",
            "--kvbridge.sample.router.health-interval=1h",
            // Ignored: with etcd the pools are what is registered there.
            "--kvbridge.sample.router.prefill-urls=http://127.0.0.1:1");
    p1 = node("prefill", "fleet-p1");
    d1 = node("decode", "fleet-d1");
  }

  @AfterAll
  void stop() {
    for (int i = apps.size() - 1; i >= 0; i--) {
      apps.get(i).close();
    }
    if (raw != null) {
      raw.close();
    }
    if (etcd != null) {
      etcd.close();
    }
  }

  @Test
  void nodesRegisterTheirUrlAndTheirEnginesHealthInEtcd() throws Exception {
    String server = "http://127.0.0.1:" + port(p1);

    patiently()
        .untilAsserted(
            () ->
                assertThat(record("fleet-p1"))
                    .hasValueSatisfying(
                        r ->
                            assertThat(r.attributes())
                                .containsEntry(NodeRegistrations.BASE_URL, server)
                                .containsEntry(
                                    NodeRegistrations.HEALTH_URL,
                                    server + "/actuator/health/prefillEngine")));
    assertThat(record("fleet-p1").orElseThrow().freeBlocks()).isPresent();
  }

  @Test
  void theRoutersPoolsAreTheRegisteredNodesAndRequestsAreServedThroughThem() {
    awaitPools(List.of(name("fleet-p1", p1)), List.of(name("fleet-d1", d1)));
    String prompt = "Pools from etcd: the router finds its nodes where they registered.";

    HttpApi.Answer answer =
        new HttpApi(port(router))
            .post(
                "/v1/completions",
                JsonMapper.shared().writeValueAsString(Map.of("prompt", prompt, "max_tokens", 5)));

    assertThat(answer.status()).as(answer.body()).isEqualTo(200);
    assertThat(answer.text()).isEqualTo(REFERENCE.referenceCompletion(prompt, 5));
  }

  @Test
  void aNodeThatStartsJoinsItsPoolAndOneThatStopsLeavesItAtOnce() {
    ConfigurableApplicationContext p2 = node("prefill", "fleet-p2");
    String p2Name = name("fleet-p2", p2);
    awaitPools(List.of(name("fleet-p1", p1), p2Name), List.of(name("fleet-d1", d1)));

    p2.close(); // removes its registration as it stops

    awaitPools(List.of(name("fleet-p1", p1)), List.of(name("fleet-d1", d1)));
  }

  @Test
  void aNodeWhoseRegistrationIsNoLongerRenewedLeavesThePoolWhenItsKeyExpires() throws Exception {
    // A node whose process was killed: its key is bound to a lease nobody renews any more.
    long lease = raw.getLeaseClient().grant(1).get(5, TimeUnit.SECONDS).getID();
    EngineRecord killed =
        new EngineRecord(
            "fleet-killed",
            Role.CONSUMER,
            1,
            Optional.empty(),
            Optional.empty(),
            "00",
            1,
            OptionalInt.of(10),
            0,
            Map.of(NodeRegistrations.BASE_URL, "http://127.0.0.1:1"));
    raw.getKVClient()
        .put(
            bytes("/kvbridge/engines/fleet-killed"),
            ByteSequence.from(killed.toJson()),
            PutOption.builder().withLeaseId(lease).build())
        .get(5, TimeUnit.SECONDS);
    String killedName = "fleet-killed at http://127.0.0.1:1";
    patiently().until(() -> decodeNames().contains(killedName));

    patiently().until(() -> !decodeNames().contains(killedName));

    assertThat(raw.getKVClient().get(bytes("/kvbridge/engines/fleet-killed")).get().getKvs())
        .as("the key expired with its lease")
        .isEmpty();
    assertThat(decodeNames()).containsExactly(name("fleet-d1", d1));
  }

  private void awaitPools(List<String> prefill, List<String> decode) {
    patiently()
        .untilAsserted(
            () -> {
              RouterStats stats = router.getBean(PdRouter.class).stats();
              assertThat(stats.prefill()).extracting(NodeStats::url).isEqualTo(prefill);
              assertThat(stats.decode()).extracting(NodeStats::url).isEqualTo(decode);
            });
  }

  private List<String> decodeNames() {
    return router.getBean(PdRouter.class).stats().decode().stream().map(NodeStats::url).toList();
  }

  private Optional<EngineRecord> record(String engineId) throws Exception {
    List<KeyValue> kvs =
        raw.getKVClient()
            .get(bytes("/kvbridge/engines/" + engineId))
            .get(5, TimeUnit.SECONDS)
            .getKvs();
    return kvs.stream()
        .findFirst()
        .map(kv -> EngineRecord.fromJson(engineId, kv.getValue().getBytes()));
  }

  private ConfigurableApplicationContext node(String profile, String engineId) {
    return app(
        profile,
        "--kvbridge.engine-id=" + engineId,
        "--kvbridge.sample." + profile + ".engine-id=" + engineId,
        "--kvbridge.fake.shared-dir=" + fabric,
        "--kvbridge.discovery.etcd.ttl=1s",
        "--kvbridge.discovery.etcd.refresh-interval=100ms");
  }

  private ConfigurableApplicationContext app(String profile, String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.add("--server.port=0");
    all.add("--kvbridge.discovery.etcd.endpoints=" + etcd.endpoint());
    all.add("--spring.main.banner-mode=off");
    ConfigurableApplicationContext app =
        new SpringApplicationBuilder(SampleApplication.class)
            .profiles(profile)
            .run(all.toArray(String[]::new));
    apps.add(app);
    return app;
  }

  private static String name(String engineId, ConfigurableApplicationContext node) {
    return engineId + " at http://127.0.0.1:" + port(node);
  }

  private static int port(ConfigurableApplicationContext app) {
    return Integer.parseInt(app.getEnvironment().getProperty("local.server.port"));
  }

  private static ConditionFactory patiently() {
    return await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50));
  }

  private static ByteSequence bytes(String text) {
    return ByteSequence.from(text, StandardCharsets.UTF_8);
  }
}
