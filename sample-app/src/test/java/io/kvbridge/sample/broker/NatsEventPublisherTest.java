package io.kvbridge.sample.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.events.CacheSnapshot;
import io.kvbridge.events.KvEventBatch;
import io.kvbridge.events.KvEventLog;
import io.kvbridge.sample.SampleProperties;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.api.KeyValueEntry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/** One engine's KV events on a real NATS server: batches in order, snapshots, and its leaving. */
class NatsEventPublisherTest {

  private static final JsonMapper JSON = JsonMapper.builder().build();

  private NatsServer server;
  private NatsEvents nats;
  private final KvEventLog log = new KvEventLog("engine/one", 0x2aL, "llama-3.1-8b", 16, 64);

  @BeforeEach
  void start() {
    server = NatsServer.start();
    nats = connect(Duration.ofMillis(100), "publisher test");
  }

  /** A connection to the test's server, snapshots put at most every {@code snapshotInterval}. */
  private NatsEvents connect(Duration snapshotInterval, String name) {
    return NatsEvents.connect(
        new SampleProperties.Nats(
            server.url(),
            "EVENTS",
            "test.kv-events",
            "snapshots",
            16,
            snapshotInterval,
            Duration.ofSeconds(2)),
        name);
  }

  @AfterEach
  void stop() {
    nats.close();
    server.close();
  }

  @Test
  void eachBatchIsAMessageOfTheEnginesSubjectInOrderAndTheLatestSnapshotIsItsKey()
      throws Exception {
    try (NatsEventPublisher publisher = new NatsEventPublisher(nats, log, Optional.empty(), JSON)) {
      for (long hash = 1; hash <= 3; hash++) {
        log.stored(List.of(hash));
        log.flush();
      }

      await().atMost(Duration.ofSeconds(10)).until(() -> publisher.published() == 3);
      JetStreamSubscription read = nats.jetStream().subscribe(nats.subject("engine/one"));
      for (long seq = 1; seq <= 3; seq++) {
        Message message = read.nextMessage(Duration.ofSeconds(5));
        assertThat(KvEventBatch.fromMap(map(message.getData())).sequence()).isEqualTo(seq);
      }
      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () -> {
                KeyValueEntry entry = nats.snapshots().get(NatsEvents.key("engine/one"));
                assertThat(entry).isNotNull();
                CacheSnapshot snapshot = CacheSnapshot.fromMap(map(entry.getValue()));
                assertThat(snapshot.sequence()).isEqualTo(3);
                assertThat(snapshot.blockHashes()).containsExactlyInAnyOrder(1L, 2L, 3L);
              });
      assertThat(publisher.lost()).isZero();
    }
  }

  @Test
  void aReaderAsksForAFreshSnapshotAndALeavingEngineDeletesIts() throws Exception {
    NatsEventPublisher publisher = new NatsEventPublisher(nats, log, Optional.empty(), JSON);
    await().atMost(Duration.ofSeconds(10)).until(() -> publisher.snapshotsPut() >= 1);
    long put = publisher.snapshotsPut();

    // Nothing changed since the last snapshot; a reader that found a gap asks anyway.
    nats.connection().publish(nats.resyncSubject("engine/one"), new byte[0]);

    await().atMost(Duration.ofSeconds(10)).until(() -> publisher.snapshotsPut() > put);
    publisher.close();
    assertThat(nats.snapshots().get(NatsEvents.key("engine/one"))).isNull();
  }

  @Test
  void aStartingPublisherPutsItsFirstSnapshotAtOnceWhateverTheInterval() throws Exception {
    try (NatsEvents slow = connect(Duration.ofHours(1), "slow publisher test");
        NatsEventPublisher publisher = new NatsEventPublisher(slow, log, Optional.empty(), JSON)) {
      await().atMost(Duration.ofSeconds(5)).until(() -> publisher.snapshotsPut() == 1);
      assertThat(nats.snapshots().get(NatsEvents.key("engine/one"))).isNotNull();
    }
  }

  @Test
  void engineIdsOfAnyTextAreSubjectTokensAndKeysThatNameThemBack() {
    for (String id : List.of("decode-0", "a.b c>*", "ünïcode")) {
      String key = NatsEvents.key(id);
      assertThat(key).matches("[0-9a-f]+");
      assertThat(NatsEvents.engineOfKey(key)).contains(id);
      assertThat(nats.subject(id)).isEqualTo("test.kv-events." + key);
    }
    assertThat(NatsEvents.engineOfKey("not-hex")).isEmpty();
    assertThat(NatsEvents.engineOfKey("ABCD")).as("upper case is not written").isEmpty();
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(byte[] json) {
    return JSON.readValue(json, Map.class);
  }
}
