package io.kvbridge.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class KvEventBatchTest {

  private static final KvEventBatch BATCH =
      new KvEventBatch(
          "decode-0",
          0x1a2bL,
          7,
          List.of(
              new KvEvent.Stored(List.of(1L, -1L)),
              new KvEvent.Removed(List.of(2L)),
              new KvEvent.Cleared()));

  @Test
  void aBatchAndASnapshotSurviveTheirJsonFormExactly() {
    CacheSnapshot snapshot = new CacheSnapshot("decode-0", 0x1a2bL, 7, "m", 16, List.of(3L, 4L));

    assertThat(KvEventBatch.fromMap(BATCH.toMap())).isEqualTo(BATCH);
    assertThat(CacheSnapshot.fromMap(snapshot.toMap())).isEqualTo(snapshot);
    assertThat(BATCH.toMap())
        .containsEntry("incarnation", "0000000000001a2b")
        .containsEntry("seq", 7L);
    assertThat(BATCH.events().get(0).toMap())
        .containsEntry("block_hashes", List.of("0000000000000001", "ffffffffffffffff"));
  }

  @Test
  void eachMalformedFieldIsNamed() {
    assertMalformed("engine_id", m -> m.put("engine_id", "line\nbreak"));
    assertMalformed("engine_id", m -> m.put("engine_id", " "));
    assertMalformed("engine_id", m -> m.remove("engine_id"));
    assertMalformed("incarnation", m -> m.put("incarnation", "1A2B"));
    assertMalformed("seq", m -> m.put("seq", 0));
    assertMalformed("seq", m -> m.put("seq", 1.5));
    assertMalformed("events", m -> m.put("events", "none"));
    assertMalformed("type", m -> m.put("events", List.of(Map.of("type", "moved"))));
    assertMalformed(
        "block_hashes",
        m -> m.put("events", List.of(Map.of("type", "stored", "block_hashes", List.of("12")))));
  }

  @Test
  void aBatchNamingMoreHashesThanAllowedIsRefused() {
    List<String> many = java.util.Collections.nCopies(KvEventBatch.MAX_HASHES, "0000000000000001");

    assertMalformed(
        "block_hashes",
        m ->
            m.put(
                "events",
                List.of(
                    Map.of("type", "stored", "block_hashes", many),
                    Map.of("type", "removed", "block_hashes", List.of("0000000000000002")))));
  }

  private static void assertMalformed(
      String field, java.util.function.Consumer<Map<String, Object>> change) {
    Map<String, Object> map = new HashMap<>(BATCH.toMap());
    change.accept(map);
    assertThatThrownBy(() -> KvEventBatch.fromMap(map))
        .isInstanceOf(MalformedEventException.class)
        .hasMessageStartingWith(field + ":");
  }
}
