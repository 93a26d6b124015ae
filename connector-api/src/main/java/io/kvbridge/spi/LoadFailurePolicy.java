package io.kvbridge.spi;

/** What the engine does with a request whose KV could not be loaded and validated. */
public enum LoadFailurePolicy {
  /** End the request with an explicit error. */
  FAIL,
  /** Prefill the prompt locally and continue. */
  RECOMPUTE
}
