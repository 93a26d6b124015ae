package io.kvbridge.wire;

/** Bytes from a peer are not a well-formed protocol message; the message says what was wrong. */
public class MalformedMessageException extends Exception {

  private static final long serialVersionUID = 1L;

  /** Describes the defect. */
  public MalformedMessageException(String message) {
    super(message);
  }
}
