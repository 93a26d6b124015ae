package io.kvbridge.lease;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

class EndedIdsTest {

  @Test
  void aRememberedIdIsFoundWithHowItEnded() {
    EndedIds ended = new EndedIds(4);

    ended.put("r-1", EndReason.READ);
    ended.put("r-2", EndReason.EXPIRED);

    assertThat(ended.reason("r-1")).isEqualTo(EndReason.READ);
    assertThat(ended.reason("r-2")).isEqualTo(EndReason.EXPIRED);
    assertThat(ended.contains("r-3")).isFalse();
  }

  @Test
  void theOldestIdIsForgottenWhenANewOneComesAtCapacity() {
    EndedIds ended = new EndedIds(3);
    for (String id : List.of("a", "b", "c", "d")) {
      ended.put(id, EndReason.READ);
    }

    assertThat(ended.contains("a")).isFalse();
    assertThat(ended.contains("b")).isTrue();
    assertThat(ended.contains("d")).isTrue();
    assertThat(ended.size()).isEqualTo(3);
  }

  @Test
  void aForgottenIdLeavesEveryOtherFindable() {
    EndedIds ended = new EndedIds(64);
    for (int i = 0; i < 64; i++) {
      ended.put("req-" + i, EndReason.RELEASED);
    }

    for (int i = 0; i < 64; i += 2) {
      ended.remove("req-" + i);
    }

    for (int i = 0; i < 64; i++) {
      assertThat(ended.contains("req-" + i)).as("req-%d", i).isEqualTo(i % 2 == 1);
    }
  }

  record Step(boolean put, int id, EndReason reason) {}

  @Provide
  Arbitrary<List<Step>> steps() {
    return Combinators.combine(
            Arbitraries.of(true, true, false),
            Arbitraries.integers().between(0, 40),
            Arbitraries.of(EndReason.class))
        .as(Step::new)
        .list()
        .ofMaxSize(400);
  }

  /** What the last {@code capacity} ends were, and whether each is still remembered. */
  private static final class Ends {
    private final int capacity;
    private final Deque<String[]> last = new ArrayDeque<>(); // {id, reason or null if forgotten}

    Ends(int capacity) {
      this.capacity = capacity;
    }

    void put(String id, EndReason reason) {
      remove(id);
      last.addLast(new String[] {id, reason.name()});
      if (last.size() > capacity) {
        last.removeFirst();
      }
    }

    void remove(String id) {
      for (String[] end : last) {
        if (end[0].equals(id)) {
          end[1] = null;
        }
      }
    }

    EndReason reason(String id) {
      for (String[] end : last) {
        if (end[0].equals(id) && end[1] != null) {
          return EndReason.valueOf(end[1]);
        }
      }
      return null;
    }
  }

  @Property(tries = 300)
  void remembersTheLastEndsLessTheIdsForgottenSince(@ForAll("steps") List<Step> steps) {
    int capacity = 8;
    EndedIds ended = new EndedIds(capacity);
    Ends model = new Ends(capacity);
    for (Step step : steps) {
      String id = "req-" + step.id();
      if (step.put()) {
        ended.put(id, step.reason());
        model.put(id, step.reason());
      } else {
        ended.remove(id);
        model.remove(id);
      }
      for (int i = 0; i <= 40; i++) {
        assertThat(ended.reason("req-" + i)).as("req-%d", i).isEqualTo(model.reason("req-" + i));
      }
    }
  }
}
