package io.kvbridge.sample.completions;

/** A completion request is malformed; answered with HTTP 400 naming the field. */
public class InvalidCompletionRequestException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  private final String param;

  /** {@code param} is the request field at fault. */
  public InvalidCompletionRequestException(String param, String message) {
    super(message);
    this.param = param;
  }

  /** The request field at fault. */
  public String param() {
    return param;
  }
}
