package io.kvbridge.sample.engine;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** What fits a model's context of prompt and completion tokens together. */
class ContextWindowTest {

  private final ContextWindow context = new ContextWindow(100);

  @Test
  void aPromptAndCompletionThatFillTheContextExactlyFit() {
    assertThatCode(() -> context.check(60, 40)).doesNotThrowAnyException();
  }

  @Test
  void oneTokenMoreThanThePromptLeavesIsRefusedNamingMaxTokensAndTheRoom() {
    assertThatThrownBy(() -> context.check(60, 41))
        .isInstanceOf(InvalidPromptException.class)
        .hasMessageContaining("ask for at most 40")
        .hasMessageContaining(ContextWindow.PROPERTY)
        .extracting(e -> ((InvalidPromptException) e).param())
        .isEqualTo("max_tokens");
  }

  @Test
  void theLargestIntegerAsMaxTokensIsRefusedRatherThanOverflowing() {
    assertThatThrownBy(() -> context.check(1, Integer.MAX_VALUE))
        .isInstanceOf(InvalidPromptException.class)
        .extracting(e -> ((InvalidPromptException) e).param())
        .isEqualTo("max_tokens");
  }

  @Test
  void aPromptThatFillsTheContextIsRefusedNamingPrompt() {
    assertThatThrownBy(() -> context.check(100, 1))
        .isInstanceOf(InvalidPromptException.class)
        .hasMessageContaining("at most 99 tokens")
        .extracting(e -> ((InvalidPromptException) e).param())
        .isEqualTo("prompt");
  }

  @Test
  void aContextOfNoTokensIsRejectedNamingTheProperty() {
    assertThatThrownBy(() -> new ContextWindow(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(ContextWindow.PROPERTY);
  }
}
