package io.kvbridge.sample.router;

import io.kvbridge.sample.completions.CompletionFailedException;

/**
 * The router dropped a request after prefill on purpose (fault injection): the decode node was
 * never called and the prefill node's lease will expire. Answered with 503.
 */
public class DroppedAfterPrefillException extends CompletionFailedException {

  private static final long serialVersionUID = 1L;

  /** The error type clients see. */
  public static final String TYPE = "dropped_after_prefill";

  /** Names the prefill node's request and the configured share. */
  public DroppedAfterPrefillException(String prefillRequestId, String producer, double share) {
    super(
        503,
        TYPE,
        "request dropped after prefill by fault injection"
            + " (kvbridge.sample.router.drop-after-prefill="
            + share
            + "); the decode node was not called, and "
            + producer
            + " keeps the blocks of "
            + prefillRequestId
            + " until their lease expires",
        null);
  }
}
