package io.kvbridge.events;

/** A KV event batch or cache snapshot that does not follow {@code docs/events.md}. */
public final class MalformedEventException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** {@code field} is wrong, for the reason {@code why}. */
  public MalformedEventException(String field, String why) {
    super(field + ": " + why);
  }
}
