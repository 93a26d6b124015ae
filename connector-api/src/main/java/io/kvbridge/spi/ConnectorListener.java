package io.kvbridge.spi;

import io.kvbridge.layout.KvLayout;

/**
 * Hears of one connector's lifecycle, for what lives beside it without wrapping it: a discovery
 * service that publishes the engine once its KV cache is registered and removes it before it
 * closes, or a registry of the connectors still open. Attach one with {@link
 * KvConnector#listen(ConnectorListener)}.
 *
 * <p>Threads: each method is called on the thread that caused it (the engine's, or the one that
 * closes the connector), after or before the event as it says, and must return promptly; an
 * exception it throws is the caller's. Every method does nothing by default.
 */
public interface ConnectorListener {

  /** Rank {@code rank} registered its KV cache, of {@code layout}; called after it did. */
  default void kvCacheRegistered(int rank, KvLayout layout) {}

  /**
   * The connector is about to close: it still answers its peers, so they may be told it is going.
   * Called once, by the first {@link KvConnector#close()}.
   */
  default void closing() {}

  /** The connector closed; called once, after {@link #closing()}, even if closing failed. */
  default void closed() {}
}
