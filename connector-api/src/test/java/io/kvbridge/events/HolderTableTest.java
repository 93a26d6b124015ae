package io.kvbridge.events;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import org.junit.jupiter.api.Test;

class HolderTableTest {

  @Test
  void aHashIsHeldWhileSomeEngineHoldsItAndTheTableGrowsAndShrinksWithWhatIsHeld() {
    HolderTable table = new HolderTable();
    for (long h = 0; h < 10_000; h++) {
      assertThat(table.set(h * 31, (int) (h % 3))).isTrue();
    }
    assertThat(table.set(31, 1)).as("already set").isFalse();
    assertThat(table.size()).isEqualTo(10_000);

    table.clearSlot(1, 3_333);
    table.clearSlot(2, 0);

    assertThat(table.size()).isEqualTo(3_334);
    long[] bits = new long[1];
    table.bitsOf(3 * 31, bits);
    assertThat(bits[0]).isEqualTo(1L);
    table.bitsOf(31, bits);
    assertThat(bits[0]).isZero();
    assertThat(table.clear(31, 1)).as("cleared with its slot").isFalse();
  }

  @Test
  void aSlotAboveSixtyThreeWidensEveryEntrysBits() {
    HolderTable table = new HolderTable();
    table.set(7, 3);
    table.set(7, 130);

    assertThat(table.words()).isEqualTo(3);
    long[] bits = new long[3];
    table.bitsOf(7, bits);
    assertThat(bits).containsExactly(1L << 3, 0L, 1L << 2);
  }

  /**
   * Whatever engines set and clear, in whatever order, each hash's bits are what a map of sets
   * says, and the table holds exactly the hashes some engine holds: removals in the middle of probe
   * runs never hide an entry behind them.
   */
  @Property(tries = 300)
  void theTableAgreesWithAMapOfSetsAfterAnyChanges(@ForAll("changes") List<int[]> changes) {
    HolderTable table = new HolderTable();
    Map<Long, BitSet> model = new HashMap<>();
    for (int[] change : changes) {
      long hash = change[1];
      int slot = change[2];
      switch (change[0]) {
        case 0, 1, 2, 3, 4 -> {
          boolean wasClear = !model.computeIfAbsent(hash, h -> new BitSet()).get(slot);
          model.get(hash).set(slot);
          assertThat(table.set(hash, slot)).isEqualTo(wasClear);
        }
        case 5, 6, 7, 8 -> {
          BitSet held = model.get(hash);
          boolean wasSet = held != null && held.get(slot);
          if (wasSet) {
            held.clear(slot);
          }
          assertThat(table.clear(hash, slot)).isEqualTo(wasSet);
        }
        default -> {
          model.values().forEach(held -> held.clear(slot));
          table.clearSlot(slot, 1);
        }
      }
      model.values().removeIf(BitSet::isEmpty);
    }
    assertThat(table.size()).isEqualTo(model.size());
    long[] bits = new long[table.words()];
    for (long hash = -64; hash < 64; hash++) {
      table.bitsOf(hash, bits);
      BitSet expected = model.getOrDefault(hash, new BitSet());
      assertThat(BitSet.valueOf(bits)).as("bits of %d", hash).isEqualTo(expected);
    }
    for (int slot : new int[] {0, 1, 2, 64, 65, 66}) {
      List<Long> held =
          model.entrySet().stream()
              .filter(e -> e.getValue().get(slot))
              .map(Map.Entry::getKey)
              .toList();
      assertThat(Arrays.stream(table.hashesOf(slot, 1)).boxed().toList())
          .as("hashes of slot %d", slot)
          .containsExactlyInAnyOrderElementsOf(held);
    }
  }

  @Provide
  Arbitrary<List<int[]>> changes() {
    // Few hashes and engines, many changes: long probe runs in small tables, removals inside
    // them; now and then a slot past 63 widens the table, or an engine is cleared.
    Arbitrary<Integer> slot =
        Arbitraries.frequencyOf(
            Tuple.of(12, Arbitraries.integers().between(0, 2)),
            Tuple.of(1, Arbitraries.integers().between(64, 66)));
    Arbitrary<int[]> change =
        Combinators.combine(
                Arbitraries.integers().between(0, 9), Arbitraries.integers().between(-40, 40), slot)
            .as((op, hash, s) -> new int[] {op, hash, s});
    return change.list().ofMaxSize(400);
  }
}
