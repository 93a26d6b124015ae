package io.kvbridge.lease;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.TreeSet;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

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
