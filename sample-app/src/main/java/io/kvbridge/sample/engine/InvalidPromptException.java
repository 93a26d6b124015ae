package io.kvbridge.sample.engine;

/** A request the engine cannot serve as given: an empty prompt, one too long, bad max tokens. */
public class InvalidPromptException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  /** Says what is wrong and which limit applies. */
  public InvalidPromptException(String message) {
    super(message);
  }
}
