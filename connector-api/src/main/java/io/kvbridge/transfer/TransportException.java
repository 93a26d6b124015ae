package io.kvbridge.transfer;

/** A transport operation failed; the message says which operation, on what, and why. */
public class TransportException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** Creates an exception with a message a user can act on. */
  public TransportException(String message) {
    super(message);
  }

  /** Creates an exception with a message and the underlying cause. */
  public TransportException(String message, Throwable cause) {
    super(message, cause);
  }
}
