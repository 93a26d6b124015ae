package io.kvbridge.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class BlockHashMemoTest {

  private static final BlockHashes HASHES = new BlockHashes("llama-3.1-8b", 4);

  /**
   * Prompts over a small alphabet in a memo of a few places: blocks that share a place replace one
   * another and prompts share prefixes; every hash is still the one computed afresh.
   */
  @Property(tries = 300)
  void everyHashIsTheOneComputedAfresh(
      @ForAll @Size(max = 12)
          List<@Size(max = 40) List<@IntRange(min = 0, max = 2) Integer>> prompts,
      @ForAll @IntRange(min = 1, max = 8) int capacity) {
    BlockHashMemo memo = new BlockHashMemo(HASHES, capacity);
    for (List<Integer> prompt : prompts) {
      int[] tokens = prompt.stream().mapToInt(Integer::intValue).toArray();
      assertThat(memo.of(tokens)).containsExactly(HASHES.of(tokens));
    }
  }

  @Test
  void aConversationsNextTurnGetsTheHashesOfItsWholePrompt() {
    BlockHashMemo memo = new BlockHashMemo(HASHES, 1024);
    int[] first = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    int[] next = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};

    assertThat(memo.of(first)).containsExactly(HASHES.of(first)).hasSize(2);
    assertThat(memo.of(next)).containsExactly(HASHES.of(next)).hasSize(3);
    assertThat(memo.of(new int[3])).isEmpty();
  }

  @Test
  void aMemoHoldsAtLeastOneBlock() {
    assertThatThrownBy(() -> new BlockHashMemo(HASHES, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at least 1");
  }
}
