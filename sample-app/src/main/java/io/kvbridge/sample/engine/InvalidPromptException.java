package io.kvbridge.sample.engine;

/**
 * A request the engine cannot serve as given: an empty prompt, one too long for the pool or the
 * context, a {@code max_tokens} below 1 or beyond what the context leaves.
 */
public class InvalidPromptException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  private final String param;

  /**
   * Says what is wrong and which limit applies; {@code param} is the request field at fault, {@code
   * prompt} or {@code max_tokens}.
   */
  public InvalidPromptException(String param, String message) {
    super(message);
    this.param = param;
  }

  /** The request field at fault: {@code prompt} or {@code max_tokens}. */
  public String param() {
    return param;
  }
}
