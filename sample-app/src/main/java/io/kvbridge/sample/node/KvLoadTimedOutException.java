package io.kvbridge.sample.node;

import io.kvbridge.sample.completions.CompletionFailedException;

/**
 * A decode node's request was not finished within the request timeout because its KV was still
 * being loaded from the prefill node: the prefill node did not finish the transfer (it is paused,
 * overloaded or gone quiet), not the decode node. Answered with 504 {@value #TYPE}, which tells a
 * router that the decode node itself is sound; the load has been cancelled.
 */
public class KvLoadTimedOutException extends CompletionFailedException {

  private static final long serialVersionUID = 1L;

  /** The error type a decode node answers with. */
  public static final String TYPE = "kv_load_timeout";

  /** {@code message} names the request, the limit and the prefill node waited for. */
  KvLoadTimedOutException(String message, Throwable cause) {
    super(504, TYPE, message, cause);
  }
}
