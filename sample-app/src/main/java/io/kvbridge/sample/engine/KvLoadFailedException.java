package io.kvbridge.sample.engine;

/**
 * A request's KV could not be loaded from its producer and the load-failure policy is {@code fail}:
 * the request ends with this error rather than with output computed from missing bytes.
 */
public class KvLoadFailedException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** Names the request and the connector's reason. */
  public KvLoadFailedException(String requestId, String reason) {
    super(
        "KV cache of request "
            + requestId
            + " could not be loaded from the prefill node: "
            + reason
            + " (load-failure-policy is fail; set kvbridge.load-failure-policy=recompute to"
            + " prefill locally instead)");
  }
}
