package io.kvbridge.sample.router;

import io.kvbridge.events.BlockHashMemo;
import io.kvbridge.events.BlockHashes;
import io.kvbridge.events.PrefixIndex;
import io.kvbridge.sample.engine.ToyModel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * What the router knows of its nodes' prefix caches: it follows every node of its pools ({@link
 * KvEventFeeds}, the pools' nodes looked at again every {@code refresh}) and answers, for a prompt,
 * how many of its leading blocks each node holds. Prompts are tokenized as the sample's engines do
 * ({@link ToyModel#tokensOf}) and named by {@link BlockHashes} of the nodes' model and block size,
 * the hashes of the last {@value #REMEMBERED_BLOCKS} or so blocks remembered ({@link
 * BlockHashMemo}): a conversation's next turn is mostly the blocks of the turn before.
 */
public final class PrefixRouting implements AutoCloseable {

  /** Blocks whose hashes the router remembers: about 16 MiB of heap when full. */
  static final int REMEMBERED_BLOCKS = 1 << 17;

  private final BlockHashMemo hashes;
  private final EventFeeds feeds;
  private final double decodeAloneShare;
  private final ScheduledExecutorService refresher;

  /**
   * Routing on what {@code feeds} learn of the nodes of {@code pools}, looked at again every {@code
   * refresh}; a request goes straight to a decode node that holds at least {@code decodeAloneShare}
   * of its prompt's full blocks (0: never).
   */
  PrefixRouting(
      BlockHashes hashes,
      EventFeeds feeds,
      List<NodePool> pools,
      Duration refresh,
      double decodeAloneShare) {
    if (!(decodeAloneShare >= 0 && decodeAloneShare <= 1)) {
      throw new IllegalArgumentException(
          "the share a decode node must hold to serve a prompt alone is 0 to 1, got "
              + decodeAloneShare);
    }
    this.hashes = new BlockHashMemo(hashes, REMEMBERED_BLOCKS);
    this.feeds = feeds;
    this.decodeAloneShare = decodeAloneShare;
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

  /** The hashes of {@code prompt}'s full blocks, as the nodes' engines name them. */
  long[] hashesOf(@Nullable String prompt) {
    return prompt == null ? new long[0] : hashes.of(ToyModel.tokensOf(prompt));
  }

  /**
   * How many of the prompt's leading blocks ({@code promptHashes}) each node of {@code pool} holds,
   * as far as known; a node not named holds none.
   */
  Map<PooledNode, Integer> cachedBlocks(NodePool pool, long[] promptHashes) {
    if (promptHashes.length == 0) {
      return Map.of();
    }
    return feeds.cachedBlocks(pool.nodes(), promptHashes);
  }

  /**
   * The fewest of a prompt's {@code promptBlocks} full blocks a decode node must hold to serve the
   * prompt alone, computing the rest itself; empty if no node may (a prompt without a full block,
   * or the share 0).
   */
  OptionalInt blocksToDecodeAlone(int promptBlocks) {
    if (decodeAloneShare == 0 || promptBlocks == 0) {
      return OptionalInt.empty();
    }
    return OptionalInt.of(Math.max(1, (int) Math.ceil(decodeAloneShare * promptBlocks - 1e-9)));
  }

  /**
   * Whether the index follows every node of {@code pools}: it knows each node's engine and holds a
   * snapshot of it.
   */
  boolean followsEvery(List<NodePool> pools) {
    for (NodePool pool : pools) {
      for (PooledNode node : pool.nodes()) {
        Optional<String> engine = feeds.engineOf(node);
        if (engine.isEmpty() || feeds.index().needsSnapshot(engine.get())) {
          return false;
        }
      }
    }
    return true;
  }

  /** The index and what its feeds refused, for the router's stats. */
  public IndexStats stats() {
    PrefixIndex.Stats index = feeds.index().stats();
    return new IndexStats(
        feeds.source(),
        index,
        feeds.refusedBatches(),
        feeds.unauthenticated(),
        feeds.unreachable());
  }

  /**
   * The prefix index as the router's stats show it.
   *
   * @param source where the index learns what the nodes hold: {@code http} (from each node) or the
   *     NATS server's URL
   * @param index the index's own counts: blocks, engines, outcomes, snapshots applied
   * @param refusedBatches batches refused before the index saw them (malformed, another engine's)
   * @param unauthenticated snapshots and batches refused because their {@code mac} was missing or
   *     wrong ({@code kvbridge.handshake.secret} set on the router)
   * @param unreachable times a node's snapshot or stream could not be read
   */
  public record IndexStats(
      String source,
      PrefixIndex.Stats index,
      long refusedBatches,
      long unauthenticated,
      long unreachable) {}

  @Override
  public void close() {
    refresher.shutdownNow();
    feeds.close();
  }
}
