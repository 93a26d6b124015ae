package io.kvbridge.sample.engine;

/**
 * The model's context: how many tokens a request's prompt and its completion may hold together. A
 * request that does not fit is refused before it reaches the step loop, so no request can make an
 * engine generate, and hold in memory, an answer of unbounded size.
 *
 * @param tokens the most prompt tokens plus {@code max_tokens} one request may ask for; positive
 */
public record ContextWindow(int tokens) {

  /** The context when none is configured. */
  public static final int DEFAULT_TOKENS = 8192;

  /** The property that sets the context of the sample's engines and router. */
  public static final String PROPERTY = "kvbridge.sample.engine.max-context-tokens";

  /** Checks the size. */
  public ContextWindow {
    if (tokens <= 0) {
      throw new IllegalArgumentException(
          "the context must hold at least one token, got " + tokens + " (" + PROPERTY + ")");
    }
  }

  /**
   * Checks that a prompt of {@code promptTokens} tokens leaves room for {@code maxTokens} more.
   *
   * @throws InvalidPromptException naming {@code prompt} when the prompt alone leaves no room for a
   *     completion, or {@code max_tokens} when the completion does not fit after the prompt
   */
  public void check(int promptTokens, int maxTokens) {
    if (promptTokens >= tokens) {
      throw new InvalidPromptException(
          "prompt",
          "prompt has "
              + promptTokens
              + " tokens but the model's context holds "
              + tokens
              + " tokens for prompt and completion together; send a prompt of at most "
              + (tokens - 1)
              + " tokens ("
              + PROPERTY
              + ")");
    }
    int room = tokens - promptTokens;
    if (maxTokens > room) {
      throw new InvalidPromptException(
          "max_tokens",
          "max_tokens is "
              + maxTokens
              + " but the model's context of "
              + tokens
              + " tokens leaves "
              + room
              + " after the prompt's "
              + promptTokens
              + "; ask for at most "
              + room
              + " ("
              + PROPERTY
              + ")");
    }
  }
}
