package io.kvbridge.sample.engine;

/**
 * A block was given back to the {@link BlockPool} that the pool does not consider held: the engine
 * freed it twice or freed a block it never allocated. Always an engine bug; the message names the
 * block.
 */
public class DoubleFreeException extends IllegalStateException {

  private static final long serialVersionUID = 1L;

  /** Names the offending block and the list it came in. */
  public DoubleFreeException(String message) {
    super(message);
  }
}
