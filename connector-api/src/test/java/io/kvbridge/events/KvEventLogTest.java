package io.kvbridge.events;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class KvEventLogTest {

  private final KvEventLog log = new KvEventLog("d0", 9, "m", 16, 2);

  @Test
  void eachFlushClosesTheNextBatchAndTheSnapshotHoldsWhatTheyLeft() {
    assertThat(log.flush()).isEmpty();
    log.stored(List.of(1L, 2L));
    log.removed(List.of(1L));
    KvEventBatch first = log.flush().orElseThrow();
    log.stored(List.of(3L));
    KvEventBatch second = log.flush().orElseThrow();

    assertThat(first.sequence()).isEqualTo(1);
    assertThat(first.events())
        .containsExactly(new KvEvent.Stored(List.of(1L, 2L)), new KvEvent.Removed(List.of(1L)));
    assertThat(second.sequence()).isEqualTo(2);
    CacheSnapshot snapshot = log.snapshot();
    assertThat(snapshot.sequence()).isEqualTo(2);
    assertThat(snapshot.blockHashes()).containsExactlyInAnyOrder(2L, 3L);
    assertThat(snapshot.incarnation()).isEqualTo(9);
    assertThat(snapshot.tokensPerBlock()).isEqualTo(16);
  }

  @Test
  void aReaderResumesFromTheBatchesKeptOrIsToldToStartFromASnapshot() {
    for (long h = 1; h <= 3; h++) {
      log.stored(List.of(h));
      log.flush();
    }

    assertThat(log.since(1).orElseThrow())
        .extracting(KvEventBatch::sequence)
        .containsExactly(2L, 3L);
    assertThat(log.since(3).orElseThrow()).isEmpty();
    // Only the last two are kept; a reader that saw nothing, or a sequence from elsewhere, resyncs.
    assertThat(log.since(0)).isEmpty();
    assertThat(log.since(4)).isEmpty();
  }

  @Test
  void listenersHearEveryBatchInOrder() {
    List<Long> heard = new ArrayList<>();
    log.subscribe(b -> heard.add(b.sequence()));
    log.stored(List.of(1L));
    log.flush();
    log.cleared();
    log.flush();

    assertThat(heard).containsExactly(1L, 2L);
    assertThat(log.snapshot().blockHashes()).isEmpty();
  }

  @Test
  void moreHashesThanOneBatchNamesAreSpreadOverSeveralInOrder() {
    List<KvEventBatch> heard = new ArrayList<>();
    log.subscribe(heard::add);
    List<Long> many = LongStream.range(0, KvEventBatch.MAX_HASHES + 5L).boxed().toList();

    log.stored(many);
    log.flush();

    assertThat(heard).extracting(KvEventBatch::sequence).containsExactly(1L, 2L);
    assertThat(heard.get(0).events().get(0).size()).isEqualTo(KvEventBatch.MAX_HASHES);
    assertThat(log.snapshot().blockHashes()).hasSize(many.size());
  }
}
