package io.kvbridge.sample.router;

import io.kvbridge.sample.completions.CompletionFailedException;

/**
 * No node of a pool is healthy, so the router does not try: answered with 503 {@code
 * prefill_pool_unavailable} or {@code decode_pool_unavailable}, naming each node and why it is
 * down, and what the router did instead.
 */
public class NoHealthyNodeException extends CompletionFailedException {

  private static final long serialVersionUID = 1L;

  /** {@code consequence} says what the router did about the request, e.g. that P was not called. */
  NoHealthyNodeException(NodePool pool, String consequence) {
    super(
        503,
        typeOf(pool),
        "no "
            + pool.kind().id()
            + " node is healthy ("
            + pool.whyDown()
            + "); "
            + consequence
            + "; try again once one is",
        null);
  }

  /** The error type for {@code pool}: {@code <kind>_pool_unavailable}. */
  static String typeOf(NodePool pool) {
    return pool.kind().id() + "_pool_unavailable";
  }
}
