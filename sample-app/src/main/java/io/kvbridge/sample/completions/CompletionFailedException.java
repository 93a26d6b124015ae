package io.kvbridge.sample.completions;

import org.jspecify.annotations.Nullable;

/**
 * A completion failed for a reason that carries its own HTTP status and error type (a failed call
 * to another node, a request dropped by fault injection, a timeout).
 */
public class CompletionFailedException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final int status;
  private final String type;

  /** {@code status} is the HTTP status to answer with, {@code type} the error's kind. */
  public CompletionFailedException(
      int status, String type, String message, @Nullable Throwable cause) {
    super(message, cause);
    this.status = status;
    this.type = type;
  }

  /** The HTTP status to answer with. */
  public int status() {
    return status;
  }

  /** The error's machine-readable kind. */
  public String type() {
    return type;
  }
}
