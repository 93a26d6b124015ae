package io.kvbridge.sample.engine;

/** A request ended because {@link Engine#cancel} cancelled it, e.g. its client went away. */
public class RequestCancelledException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** Names the request and why it was cancelled. */
  public RequestCancelledException(String requestId, String why) {
    super("request " + requestId + " was cancelled: " + why);
  }
}
