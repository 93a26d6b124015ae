package io.kvbridge.sample.router;

import io.kvbridge.events.PrefixIndex;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;

/**
 * Where the router's prefix index learns what every node's cache holds: from each node over HTTP
 * ({@link KvEventFeeds}) or from a broker ({@link NatsEventFeeds}).
 *
 * <p>Thread-safe.
 */
interface EventFeeds extends AutoCloseable {

  /**
   * Follows exactly {@code nodes}: the engine of each is indexed; the engine of a node no longer
   * among them leaves the index.
   */
  void follow(Collection<PooledNode> nodes);

  /**
   * For each of {@code nodes} whose engine the index knows, the prompt's leading blocks it holds.
   */
  Map<PooledNode, Integer> cachedBlocks(Collection<PooledNode> nodes, long[] promptHashes);

  /** The engine {@code node} runs, once the feeds know it. */
  Optional<String> engineOf(PooledNode node);

  /** The index the feeds keep. */
  PrefixIndex index();

  /** What reads, checks and counts the snapshots and batches. */
  EventIntake intake();

  /** Batches and snapshots refused before the index saw them: malformed, or another engine's. */
  default long refusedBatches() {
    return intake().refusedCount();
  }

  /** Snapshots and batches refused because their {@code mac} was missing or wrong. */
  default long unauthenticated() {
    return intake().unauthenticatedCount();
  }

  /** Times a node's (or the broker's) events could not be read. */
  default long unreachable() {
    return intake().unreachableCount();
  }

  /** Where the events come from: {@code http} (each node), or the broker's URL. */
  String source();

  /** Stops following. */
  @Override
  void close();
}
