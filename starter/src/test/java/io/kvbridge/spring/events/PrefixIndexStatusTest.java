package io.kvbridge.spring.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;

import io.kvbridge.events.PrefixIndex;
import io.kvbridge.events.PrefixIndex.Outcome;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PrefixIndexStatusTest {

  private static final PrefixIndex.Stats STATS =
      new PrefixIndex.Stats(
          Map.of(Outcome.APPLIED, 40L, Outcome.GAP, 2L, Outcome.NOT_SYNCED, 1L), 3, 1200, 4);

  @Test
  void ofTakesWhatTheIndexHoldsAndTheCountsKeptAroundIt() {
    PrefixIndexStatus status = PrefixIndexStatus.of(STATS, 5, 6, 7, 100, 60);

    assertThat(status)
        .isEqualTo(
            new PrefixIndexStatus(
                1200,
                4,
                Map.of(
                    "APPLIED", 40L,
                    "REPEATED", 0L,
                    "GAP", 2L,
                    "UNKNOWN_ENGINE", 0L,
                    "WRONG_INCARNATION", 0L,
                    "NOT_SYNCED", 1L,
                    "WRONG_MODEL", 0L),
                3,
                5,
                6,
                7,
                100,
                60));
  }

  @Test
  void ofNamesEveryOutcomeInDeclarationOrderWithZeroWhereTheIndexCountedNone() {
    PrefixIndexStatus status =
        PrefixIndexStatus.of(new PrefixIndex.Stats(Map.of(), 0, 0, 0), 0, 0, 0, 0, 0);

    assertThat(status.offered())
        .containsExactly(
            entry("APPLIED", 0L),
            entry("REPEATED", 0L),
            entry("GAP", 0L),
            entry("UNKNOWN_ENGINE", 0L),
            entry("WRONG_INCARNATION", 0L),
            entry("NOT_SYNCED", 0L),
            entry("WRONG_MODEL", 0L));
  }

  @Test
  void hitRateIsTheShareOfRequestsSentForWhatACacheHolds() {
    assertThat(PrefixIndexStatus.of(STATS, 0, 0, 0, 80, 60).hitRate()).isEqualTo(0.75);
  }

  @Test
  void hitRateIsZeroBeforeAnyRequest() {
    assertThat(PrefixIndexStatus.of(STATS, 0, 0, 0, 0, 0).hitRate()).isZero();
  }

  @Test
  void theOutcomesAreACopyThatCannotBeChanged() {
    Map<String, Long> offered = new HashMap<>(Map.of("APPLIED", 1L));
    PrefixIndexStatus status = new PrefixIndexStatus(0, 0, offered, 0, 0, 0, 0, 0, 0);

    offered.put("APPLIED", 2L);

    assertThat(status.offered()).containsExactly(entry("APPLIED", 1L));
    assertThatThrownBy(() -> status.offered().put("GAP", 1L))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void aNegativeCountIsRefusedWithItsName() {
    assertThatThrownBy(() -> PrefixIndexStatus.of(STATS, 0, 0, -1, 0, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unreachable")
        .hasMessageContaining("-1");
  }

  @Test
  void aNegativeOutcomeCountIsRefusedWithItsOutcome() {
    assertThatThrownBy(() -> new PrefixIndexStatus(0, 0, Map.of("GAP", -2L), 0, 0, 0, 0, 0, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("offered GAP")
        .hasMessageContaining("-2");
  }
}
