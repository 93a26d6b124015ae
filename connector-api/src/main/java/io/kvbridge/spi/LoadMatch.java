package io.kvbridge.spi;

/**
 * How much of a new request's prompt a consumer can load from a producer.
 *
 * @param externalTokens prompt tokens whose KV will be loaded (0: compute everything locally)
 * @param async whether the load completes in a later step (always, for remote loads)
 */
public record LoadMatch(int externalTokens, boolean async) {

  /** Nothing to load. */
  public static final LoadMatch NONE = new LoadMatch(0, false);
}
