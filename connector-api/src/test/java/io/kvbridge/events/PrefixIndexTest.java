package io.kvbridge.events;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.events.PrefixIndex.Outcome;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class PrefixIndexTest {

  private static final String MODEL = "llama-3.1-8b";
  private static final BlockHashes HASHES = new BlockHashes(MODEL, 4);
  private static final long[] PROMPT = HASHES.of(new int[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});

  private final PrefixIndex index = new PrefixIndex(MODEL, 4);

  @Test
  void batchesApplyInOrderAndEachEngineMatchesTheBlocksItHoldsFromThePromptsStart() {
    synced("d0", 1, 0);
    synced("d1", 1, 0);

    assertThat(index.apply(stored("d0", 1, 1, PROMPT[0], PROMPT[1], PROMPT[2])))
        .isEqualTo(Outcome.APPLIED);
    assertThat(index.apply(stored("d1", 1, 1, PROMPT[0]))).isEqualTo(Outcome.APPLIED);
    assertThat(index.apply(removed("d0", 1, 2, PROMPT[2]))).isEqualTo(Outcome.APPLIED);

    assertThat(index.match(PROMPT)).isEqualTo(Map.of("d0", 2, "d1", 1));
    assertThat(index.size()).isEqualTo(3);
  }

  @Test
  void onlyASnapshotAheadOfWhatTheIndexHoldsIsNewer() {
    assertThat(index.isNewer(snapshot("d0", 1, 0))).as("not registered").isFalse();
    index.register("d0");
    assertThat(index.isNewer(snapshot("d0", 1, 0))).as("never synced").isTrue();
    synced("d0", 1, 0);
    index.apply(stored("d0", 1, 1, PROMPT[0]));
    index.apply(stored("d0", 1, 2, PROMPT[1]));

    assertThat(index.isNewer(snapshot("d0", 1, 1, PROMPT[0]))).as("behind").isFalse();
    assertThat(index.isNewer(snapshot("d0", 1, 2, PROMPT[0], PROMPT[1]))).as("level").isFalse();
    assertThat(index.isNewer(snapshot("d0", 1, 3))).as("ahead").isTrue();
    assertThat(index.isNewer(snapshot("d0", 2, 0))).as("a new incarnation").isTrue();
    index.apply(stored("d0", 1, 4, PROMPT[2]));
    assertThat(index.isNewer(snapshot("d0", 1, 1))).as("after a gap").isTrue();
  }

  @Test
  void aBlockHeldWithoutTheBlocksBeforeItIsNoMatch() {
    synced("d0", 1, 0);
    index.apply(stored("d0", 1, 1, PROMPT[1], PROMPT[2]));

    assertThat(index.match(PROMPT)).isEmpty();
  }

  @Test
  void aRepeatedBatchChangesNothingAndASkippedOneStopsTheEngineUntilASnapshot() {
    synced("d0", 1, 0);
    index.apply(stored("d0", 1, 1, PROMPT[0]));

    assertThat(index.apply(removed("d0", 1, 1, PROMPT[0]))).isEqualTo(Outcome.REPEATED);
    assertThat(index.apply(stored("d0", 1, 3, PROMPT[1]))).isEqualTo(Outcome.GAP);
    assertThat(index.needsSnapshot("d0")).isTrue();
    assertThat(index.apply(stored("d0", 1, 2, PROMPT[1]))).isEqualTo(Outcome.NOT_SYNCED);
    // What it held stays indexed until the snapshot replaces it.
    assertThat(index.match(PROMPT)).isEqualTo(Map.of("d0", 1));

    assertThat(index.resync(snapshot("d0", 1, 3, PROMPT[0], PROMPT[1]))).isEqualTo(Outcome.APPLIED);
    assertThat(index.apply(stored("d0", 1, 4, PROMPT[2]))).isEqualTo(Outcome.APPLIED);
    assertThat(index.match(PROMPT)).isEqualTo(Map.of("d0", 3));
    assertThat(index.stats().count(Outcome.GAP)).isEqualTo(1);
    assertThat(index.stats().resyncs()).isEqualTo(2);
  }

  @Test
  void aRestartedEnginesOldEntriesGoWithTheSnapshotOfItsNewIncarnation() {
    synced("d0", 1, 0);
    index.apply(stored("d0", 1, 1, PROMPT[0], PROMPT[1]));

    // Batches of the new incarnation before its snapshot, or of the old one after it, are refused.
    assertThat(index.apply(stored("d0", 2, 1, PROMPT[0]))).isEqualTo(Outcome.WRONG_INCARNATION);
    index.resync(snapshot("d0", 2, 0));
    assertThat(index.apply(stored("d0", 1, 2, PROMPT[0]))).isEqualTo(Outcome.WRONG_INCARNATION);

    assertThat(index.match(PROMPT)).isEmpty();
    assertThat(index.blocksOf("d0")).isZero();
  }

  @Test
  void eventsOfEnginesNotRegisteredOrSnapshotsOfAnotherModelAreRefusedAndCounted() {
    assertThat(index.apply(stored("ghost", 1, 1, PROMPT[0]))).isEqualTo(Outcome.UNKNOWN_ENGINE);
    assertThat(index.resync(snapshot("ghost", 1, 0, PROMPT[0]))).isEqualTo(Outcome.UNKNOWN_ENGINE);
    index.register("d0");
    assertThat(index.apply(stored("d0", 1, 1, PROMPT[0]))).isEqualTo(Outcome.NOT_SYNCED);
    assertThat(index.resync(new CacheSnapshot("d0", 1, 0, "qwen2.5-7b", 4, List.of(PROMPT[0]))))
        .isEqualTo(Outcome.WRONG_MODEL);
    assertThat(index.resync(new CacheSnapshot("d0", 1, 0, MODEL, 16, List.of(PROMPT[0]))))
        .isEqualTo(Outcome.WRONG_MODEL);

    assertThat(index.size()).isZero();
    assertThat(index.stats().count(Outcome.UNKNOWN_ENGINE)).isEqualTo(2);
    assertThat(index.stats().count(Outcome.WRONG_MODEL)).isEqualTo(2);
  }

  @Test
  void aRemovedEngineTakesEveryEntryWithIt() {
    synced("d0", 1, 0);
    synced("d1", 1, 0);
    index.apply(stored("d0", 1, 1, PROMPT[0], PROMPT[1]));
    index.apply(stored("d1", 1, 1, PROMPT[0]));

    assertThat(index.remove("d0")).isTrue();

    assertThat(index.match(PROMPT)).isEqualTo(Map.of("d1", 1));
    assertThat(index.apply(stored("d0", 1, 2, PROMPT[2]))).isEqualTo(Outcome.UNKNOWN_ENGINE);
    assertThat(index.size()).isEqualTo(1);
  }

  @Test
  void clearingAnEnginesCacheDropsItsBlocks() {
    synced("d0", 1, 0);
    index.apply(stored("d0", 1, 1, PROMPT[0]));

    index.apply(new KvEventBatch("d0", 1, 2, List.of(new KvEvent.Cleared())));

    assertThat(index.blocksOf("d0")).isZero();
  }

  @Test
  void everyEngineOfAFleetWiderThanOneWordOfBitsMatchesItsOwnPrefixAndARemovedOnesSlotIsReused() {
    Map<String, Integer> expected = new HashMap<>();
    for (int e = 0; e < 70; e++) {
      int held = e % (PROMPT.length + 1);
      synced("d" + e, 1, 0, Arrays.copyOf(PROMPT, held));
      if (held > 0) {
        expected.put("d" + e, held);
      }
    }

    assertThat(index.match(PROMPT)).isEqualTo(expected);

    index.remove("d3");
    synced("d70", 1, 0, PROMPT[0]);
    expected.remove("d3");
    expected.put("d70", 1);
    assertThat(index.match(PROMPT)).isEqualTo(expected);
    assertThat(index.blocksOf("d3")).isZero();
  }

  @Test
  void aSnapshotOfTheSameEngineKeepsTheBlocksItStillHoldsAndDropsTheOthers() {
    synced("d0", 1, 0, PROMPT[0], PROMPT[1], PROMPT[2]);
    synced("d1", 1, 0, PROMPT[0], PROMPT[1]);

    assertThat(index.resync(snapshot("d0", 1, 5, PROMPT[0], PROMPT[2], PROMPT[0])))
        .isEqualTo(Outcome.APPLIED);

    assertThat(index.blocksOf("d0")).isEqualTo(2);
    assertThat(index.match(PROMPT)).isEqualTo(Map.of("d0", 1, "d1", 2));
    assertThat(index.match(new long[] {PROMPT[2]})).isEqualTo(Map.of("d0", 1));
    assertThat(index.size()).isEqualTo(4);
  }

  /**
   * Matches run while snapshots replace an engine's blocks, all of a prompt and none of it in turn:
   * each match sees the engine before or after a snapshot, never halfway through one.
   */
  @Test
  void aMatchNeverSeesASnapshotHalfApplied() throws Exception {
    long[] many = HASHES.of(new int[4 * 400]);
    long[] prompt = Arrays.copyOf(many, 400);
    synced("d0", 1, 0);
    AtomicBoolean done = new AtomicBoolean();
    Set<Integer> seen = ConcurrentHashMap.newKeySet();
    AtomicLong reads = new AtomicLong();
    Thread reader =
        new Thread(
            () -> {
              while (!done.get()) {
                seen.add(index.match(prompt).getOrDefault("d0", 0));
                reads.incrementAndGet();
              }
            });
    reader.start();
    try {
      // At least 400 snapshots, and on until the reader has matched through many of them.
      for (int seq = 1; seq <= 400 || reads.get() < 2_000 || seen.size() < 2; seq++) {
        index.resync(seq % 2 == 1 ? snapshot("d0", 1, seq, prompt) : snapshot("d0", 1, seq));
      }
    } finally {
      done.set(true);
      reader.join();
    }
    assertThat(seen).isSubsetOf(0, 400).contains(0, 400);
  }

  /** Whatever order blocks are stored and removed in, the index holds exactly what is left. */
  @Property
  void theIndexHoldsExactlyWhatTheEnginesEventsLeft(
      @ForAll @Size(max = 60) List<@IntRange(min = -8, max = 8) Integer> changes) {
    PrefixIndex index = new PrefixIndex(MODEL, 4);
    index.register("d0");
    index.resync(new CacheSnapshot("d0", 1, 0, MODEL, 4, List.of()));
    Set<Long> held = new HashSet<>();
    long seq = 0;
    for (int change : changes) {
      long hash = Math.abs(change);
      KvEvent event =
          change >= 0 ? new KvEvent.Stored(List.of(hash)) : new KvEvent.Removed(List.of(hash));
      if (change >= 0) {
        held.add(hash);
      } else {
        held.remove(hash);
      }
      assertThat(index.apply(new KvEventBatch("d0", 1, ++seq, List.of(event))))
          .isEqualTo(Outcome.APPLIED);
    }
    assertThat(index.blocksOf("d0")).isEqualTo(held.size());
    for (long h = 0; h <= 8; h++) {
      assertThat(index.match(new long[] {h}).containsKey("d0")).isEqualTo(held.contains(h));
    }
  }

  private void synced(String engine, long incarnation, long seq, long... hashes) {
    index.register(engine);
    assertThat(index.resync(snapshot(engine, incarnation, seq, hashes))).isEqualTo(Outcome.APPLIED);
  }

  private static CacheSnapshot snapshot(String engine, long incarnation, long seq, long... hashes) {
    return new CacheSnapshot(
        engine, incarnation, seq, MODEL, 4, Arrays.stream(hashes).boxed().toList());
  }

  private static KvEventBatch stored(String engine, long incarnation, long seq, long... hashes) {
    return new KvEventBatch(
        engine,
        incarnation,
        seq,
        List.of(new KvEvent.Stored(Arrays.stream(hashes).boxed().toList())));
  }

  private static KvEventBatch removed(String engine, long incarnation, long seq, long... hashes) {
    return new KvEventBatch(
        engine,
        incarnation,
        seq,
        List.of(new KvEvent.Removed(Arrays.stream(hashes).boxed().toList())));
  }
}
