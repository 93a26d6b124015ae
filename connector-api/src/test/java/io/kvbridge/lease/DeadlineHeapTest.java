package io.kvbridge.lease;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

class DeadlineHeapTest {

  /** An entry with its current deadline, as the lease table keeps one. */
  private static final class Item extends DeadlineHeap.Entry {
    long deadline;

    Item(long sequence, long deadline) {
      super(sequence);
      this.deadline = deadline;
    }
  }

  private static final Comparator<Item> ORDER =
      Comparator.<Item>comparingLong(i -> i.deadline).thenComparingLong(i -> i.sequence);

  record Step(int kind, int pick, int amount) {}

  @Provide
  Arbitrary<List<Step>> steps() {
    return Combinators.combine(
            Arbitraries.integers().between(0, 2),
            Arbitraries.integers().between(0, 1000),
            Arbitraries.integers().between(0, 20))
        .as(Step::new)
        .list()
        .ofMaxSize(300);
  }

  @Test
  void theSoonestDeadlineComesFirstWhateverTheOrderOfAdding() {
    DeadlineHeap heap = new DeadlineHeap();
    long[] deadlines = {50, 40, 30, 20, 10, 60, 5, 45, 15};
    for (int i = 0; i < deadlines.length; i++) {
      heap.add(new Item(i, deadlines[i]), deadlines[i]);
      assertThat(heap.size()).isEqualTo(i + 1);
    }

    assertThat(heap.firstDeadline()).isEqualTo(5);
    assertThat(drain(heap)).containsExactly(5L, 10L, 15L, 20L, 30L, 40L, 45L, 50L, 60L);
    assertThat(heap.isEmpty()).isTrue();
    assertThat(heap.size()).isZero();
  }

  @Test
  void ofEqualDeadlinesTheEntryOfTheLowerSequenceComesFirst() {
    DeadlineHeap heap = new DeadlineHeap();
    for (long sequence : new long[] {3, 1, 4, 0, 2}) {
      heap.add(new Item(sequence, 7), 7);
    }

    List<Long> sequences = new ArrayList<>();
    while (!heap.isEmpty()) {
      sequences.add(heap.first().sequence);
      heap.remove(heap.first());
    }

    assertThat(sequences).containsExactly(0L, 1L, 2L, 3L, 4L);
  }

  @Test
  void theLastEntryMovedIntoARemovedEntrysSlotRisesAboveLaterDeadlines() {
    // Added in this order, the heap is [1, 2, 10, 3, 5, 11, 12, 4]: 4 is the last entry, below 3.
    DeadlineHeap heap = new DeadlineHeap();
    List<Item> items = new ArrayList<>();
    long sequence = 0;
    for (long deadline : new long[] {1, 2, 10, 3, 5, 11, 12, 4}) {
      Item item = new Item(sequence++, deadline);
      items.add(item);
      heap.add(item, deadline);
    }

    // Removing 11 moves 4 into its slot, below 10: it must rise above 10.
    heap.remove(items.get(5));
    assertThat(items.get(5).slot).isEqualTo(-1);
    // Postponing 1, 2 and 3 past everything leaves 4 the soonest.
    for (int i : new int[] {0, 1, 3}) {
      Item item = items.get(i);
      item.deadline += 100;
      heap.postpone(item, item.deadline);
    }

    assertThat(heap.first()).isSameAs(items.get(7));
    assertThat(heap.firstDeadline()).isEqualTo(4);
  }

  @Test
  void aHeapGrownPastItsFirstArraysKeepsEveryEntry() {
    DeadlineHeap heap = new DeadlineHeap();
    for (int i = 0; i < 100; i++) {
      heap.add(new Item(i, 1000 - i), 1000 - i);
    }

    assertThat(heap.size()).isEqualTo(100);
    assertThat(drain(heap)).hasSize(100).isSorted();
  }

  @Test
  void keepsTheOrderOfASortedSetThroughFixedSequencesOfSteps() {
    for (long seed = 0; seed < 20; seed++) {
      Random random = new Random(seed);
      List<Step> steps = new ArrayList<>();
      for (int i = 0; i < 300; i++) {
        steps.add(new Step(random.nextInt(3), random.nextInt(1001), random.nextInt(21)));
      }
      keepsTheOrderOfASortedSet(steps);
    }
  }

  private static List<Long> drain(DeadlineHeap heap) {
    List<Long> deadlines = new ArrayList<>();
    while (!heap.isEmpty()) {
      deadlines.add(heap.firstDeadline());
      heap.remove(heap.first());
    }
    return deadlines;
  }

  /**
   * Adding, postponing and removing in any order, the heap's first entry is always the one that
   * comes first by (deadline, sequence), and draining it yields every entry in that order.
   */
  @Property(tries = 300)
  void keepsTheOrderOfASortedSet(@ForAll("steps") List<Step> steps) {
    DeadlineHeap heap = new DeadlineHeap();
    TreeSet<Item> model = new TreeSet<>(ORDER);
    List<Item> live = new ArrayList<>();
    long sequence = 0;
    for (Step step : steps) {
      if (step.kind() == 0 || live.isEmpty()) {
        Item item = new Item(sequence++, step.amount());
        heap.add(item, item.deadline);
        model.add(item);
        live.add(item);
      } else if (step.kind() == 1) {
        Item item = live.get(step.pick() % live.size());
        model.remove(item);
        item.deadline += step.amount();
        heap.postpone(item, item.deadline);
        model.add(item);
      } else {
        Item item = live.remove(step.pick() % live.size());
        heap.remove(item);
        model.remove(item);
        assertThat(item.slot).isEqualTo(-1);
      }
      assertThat(heap.size()).isEqualTo(model.size());
      if (!model.isEmpty()) {
        assertThat(heap.first()).isSameAs(model.first());
        assertThat(heap.firstDeadline()).isEqualTo(model.first().deadline);
      }
    }
    while (!heap.isEmpty()) {
      Item first = (Item) heap.first();
      assertThat(first).isSameAs(model.pollFirst());
      heap.remove(first);
    }
  }
}
