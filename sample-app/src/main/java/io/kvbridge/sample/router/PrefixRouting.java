package io.kvbridge.sample.router;

import io.kvbridge.events.BlockHashes;
import io.kvbridge.events.PrefixIndex;
import io.kvbridge.sample.engine.ToyModel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * What the router knows of its nodes' prefix caches: it follows every node of its pools ({@link
 * KvEventFeeds}, the pools' nodes looked at again every {@code refresh}) and answers, for a prompt,
 * how many of its leading blocks each node holds. Prompts are tokenized as the sample's engines do
 * ({@link ToyModel#tokensOf}) and named by {@link BlockHashes} of the nodes' model and block size.
 */
public final class PrefixRouting implements AutoCloseable {

  private final BlockHashes hashes;
  private final KvEventFeeds feeds;
  private final ScheduledExecutorService refresher;

  PrefixRouting(BlockHashes hashes, KvEventFeeds feeds, List<NodePool> pools, Duration refresh) {
    this.hashes = hashes;
    this.feeds = feeds;
    this.refresher =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "kv-events-pools");
              t.setDaemon(true);
              return t;
            });
    Runnable follow =
        () -> {
          List<PooledNode> all = new ArrayList<>();
          pools.forEach(pool -> all.addAll(pool.nodes()));
          feeds.follow(all);
        };
    follow.run();
    refresher.scheduleWithFixedDelay(
        follow, refresh.toMillis(), refresh.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * How many of {@code prompt}'s leading blocks each node of {@code pool} holds, as far as known.
   */
  Map<PooledNode, Integer> cachedBlocks(NodePool pool, @Nullable String prompt) {
    if (prompt == null) {
      return Map.of();
    }
    long[] prompted = hashes.of(ToyModel.tokensOf(prompt));
    if (prompted.length == 0) {
      return Map.of();
    }
    return feeds.cachedBlocks(pool.nodes(), prompted);
  }

  /** The index and what its feeds refused, for the router's stats. */
  public IndexStats stats() {
    PrefixIndex.Stats index = feeds.index().stats();
    return new IndexStats(index, feeds.refusedBatches(), feeds.unreachable());
  }

  /**
   * The prefix index as the router's stats show it.
   *
   * @param index the index's own counts: blocks, engines, outcomes, snapshots applied
   * @param refusedBatches batches refused before the index saw them (malformed, another engine's)
   * @param unreachable times a node's snapshot or stream could not be read
   */
  public record IndexStats(PrefixIndex.Stats index, long refusedBatches, long unreachable) {}

  @Override
  public void close() {
    refresher.shutdownNow();
    feeds.close();
  }
}
