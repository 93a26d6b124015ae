package io.kvbridge.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Random;
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

  @Test
  void aCapacityOfOneRemembersTheLastEndOnly() {
    EndedIds ended = new EndedIds(1);

    ended.put("a", EndReason.READ);
    assertThat(ended.reason("a")).isEqualTo(EndReason.READ);
    ended.put("b", EndReason.REVOKED);

    assertThat(ended.contains("a")).isFalse();
    assertThat(ended.reason("b")).isEqualTo(EndReason.REVOKED);
    assertThat(ended.size()).isEqualTo(1);
  }

  @Test
  void aCapacityBelowOneIsRefused() {
    assertThatThrownBy(() -> new EndedIds(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("capacity must be at least 1, got 0");
  }

  @Test
  void anIdThatEndsAgainIsRememberedOnceWithItsLatestEnd() {
    EndedIds ended = new EndedIds(4);

    ended.put("a", EndReason.READ);
    ended.put("a", EndReason.EXPIRED);

    assertThat(ended.reason("a")).isEqualTo(EndReason.EXPIRED);
    assertThat(ended.size()).isEqualTo(1);
    ended.remove("a");
    assertThat(ended.contains("a")).isFalse();
    assertThat(ended.size()).isZero();
  }

  @Test
  void anEndTakesThePlaceOfTheEndCapacityEndsBeforeItEvenIfThatOneWasForgotten() {
    EndedIds ended = new EndedIds(3);
    for (String id : List.of("a", "b", "c")) {
      ended.put(id, EndReason.READ);
    }
    ended.remove("b");

    ended.put("d", EndReason.READ); // in a's place
    assertThat(ended.contains("a")).isFalse();
    assertThat(ended.size()).isEqualTo(2);
    ended.put("e", EndReason.READ); // in b's place, forgotten already
    assertThat(ended.contains("c")).isTrue();
    assertThat(ended.size()).isEqualTo(3);
    ended.put("f", EndReason.READ); // in c's place

    assertThat(List.of("a", "b", "c", "d", "e", "f"))
        .filteredOn(ended::contains)
        .containsExactly("d", "e", "f");
  }

  @Test
  void forgettingAnyOneOfManyCollidingIdsLeavesEveryOtherFindable() {
    // Ids that do not count up collide in runs of neighbouring slots.
    List<String> ids = scatteredIds(64, 7);
    for (String forgotten : ids) {
      EndedIds ended = new EndedIds(64);
      ids.forEach(id -> ended.put(id, EndReason.READ));

      ended.remove(forgotten);

      assertThat(ids).filteredOn(ended::contains).hasSize(63).doesNotContain(forgotten);
    }
  }

  @Test
  void forgettingIdsOneByOneInAnyOrderLeavesTheRestFindable() {
    for (long seed = 0; seed < 10; seed++) {
      List<String> ids = scatteredIds(48, seed);
      EndedIds ended = new EndedIds(48);
      ids.forEach(id -> ended.put(id, EndReason.EXPIRED));
      List<String> order = new ArrayList<>(ids);
      Collections.shuffle(order, new Random(seed));

      for (int i = 0; i < order.size(); i++) {
        ended.remove(order.get(i));
        List<String> rest = order.subList(i + 1, order.size());
        assertThat(ids).as("seed %d", seed).filteredOn(ended::contains).hasSameElementsAs(rest);
      }
    }
  }

  private static List<String> scatteredIds(int count, long seed) {
    Random random = new Random(seed);
    List<String> ids = new ArrayList<>();
    while (ids.size() < count) {
      String id = "req-" + Long.toString(random.nextLong() & Long.MAX_VALUE, 36);
      if (!ids.contains(id)) {
        ids.add(id);
      }
    }
    return ids;
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
