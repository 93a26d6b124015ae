package io.kvbridge.benchmarks.routing;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ConversationsTest {

  private final Conversations text = new Conversations(42, 8, 1024, 200);

  @Test
  void conversationsShareTheirSystemPromptByItsNumberAndTheSameSeedGivesTheSameText() {
    assertThat(text.system(3)).hasSize(1024).isEqualTo(text.system(11));
    assertThat(text.system(3)).isNotEqualTo(text.system(4));
    assertThat(new Conversations(42, 8, 1024, 200).user(5, 2)).isEqualTo(text.user(5, 2));
    assertThat(new Conversations(43, 8, 1024, 200).system(3)).isNotEqualTo(text.system(3));
  }

  @Test
  void everyUserMessageAndFillerIsItsOwn() {
    assertThat(text.user(5, 2))
        .hasSize(200)
        .isNotEqualTo(text.user(5, 3))
        .isNotEqualTo(text.user(6, 2));
    assertThat(text.filler(1, 4096)).hasSize(4096).isNotEqualTo(text.filler(2, 4096));
    assertThat(text.filler(1, 4096)).doesNotStartWith(text.system(1).substring(0, 16));
  }
}
