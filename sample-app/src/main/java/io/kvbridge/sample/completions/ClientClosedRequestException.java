package io.kvbridge.sample.completions;

/**
 * The client closed its connection before its completion was answered, and the work done for it was
 * cancelled. Answered with 499, nginx's status for a client that closed its request, which nobody
 * reads but access logs show.
 */
public class ClientClosedRequestException extends CompletionFailedException {

  private static final long serialVersionUID = 1L;

  /** The status, outside HTTP's registry. */
  public static final int STATUS = 499;

  /** The error type. */
  public static final String TYPE = "client_closed_request";

  /** {@code what} says what was cancelled. */
  public ClientClosedRequestException(String what) {
    super(STATUS, TYPE, "the client closed its connection; " + what, null);
  }
}
