package io.kvbridge.sample.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntConsumer;

/**
 * An engine's blocks and what it computes into them: how many a request could be given (free ones
 * and those the prefix cache would give up), taking them (evicting from the prefix cache as far as
 * needed), copying a cached prefix into a request's own blocks, and computing a request's KV.
 *
 * <p>Threads: the engine thread only.
 */
final class EngineBlocks {

  private final String engineId;
  private final EngineShape shape;
  private final ToyModel model;
  private final BlockPool pool;
  private final PrefixCache cache;
  // What computing one layer of one token costs.
  private final Duration prefillCost;

  // Below this a wait spins: parking overshoots by tens of microseconds.
  private static final long SPIN_NANOS = 100_000;

  EngineBlocks(
      String engineId,
      EngineShape shape,
      ToyModel model,
      BlockPool pool,
      PrefixCache cache,
      Duration prefillCost) {
    this.prefillCost = prefillCost;
    this.engineId = engineId;
    this.shape = shape;
    this.model = model;
    this.pool = pool;
    this.cache = cache;
  }

  /** Blocks a request could be given now: free ones, and those the prefix cache would give up. */
  int available() {
    return pool.freeBlocks() + cache.evictable();
  }

  /** How many blocks hold {@code tokens} tokens. */
  int blocksFor(int tokens) {
    return (tokens + shape.tokensPerBlock() - 1) / shape.tokensPerBlock();
  }

  /** Takes {@code count} blocks, evicting from the prefix cache as far as needed. */
  List<Integer> allocate(int count) {
    int missing = count - pool.freeBlocks();
    if (missing > 0) {
      cache.evict(missing);
    }
    return pool.tryAllocate(count)
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "engine " + engineId + " checked for " + count + " free blocks but has fewer"));
  }

  /**
   * Copies the cached blocks of {@code hit} holding a prompt's first {@code tokens} tokens (whole
   * blocks, or the whole prompt) into the first of {@code into}.
   */
  void copyPrefix(PrefixCache.Hit hit, int tokens, List<Integer> into) {
    int count = blocksFor(tokens);
    pool.copyBlocks(hit.blockIds().subList(0, count), into.subList(0, count));
  }

  /**
   * Computes the KV of tokens {@code [from, end)} of {@code tokens} into {@code blocks}, and
   * returns it (those tokens' KV in token order; empty if there are none).
   */
  byte[] compute(int[] tokens, List<Integer> blocks, int from) {
    byte[] kv = computeKv(tokens, from);
    if (kv.length > 0) {
      // Nobody waits for single layers: every layer's cost at once, every layer in one write.
      spend(prefillCost.multipliedBy((long) (tokens.length - from) * shape.model().layers()));
      pool.writeTokens(blocks, from, tokens.length, kv);
    }
    return kv;
  }

  /**
   * {@link #compute(int[], List, int)} layer by layer, as a forward pass runs: each layer costs
   * {@code prefillCost} per token computed, is written into the blocks, and then handed to {@code
   * saved}.
   */
  byte[] compute(int[] tokens, List<Integer> blocks, int from, IntConsumer saved) {
    byte[] kv = computeKv(tokens, from);
    if (kv.length > 0) {
      for (int layer = 0; layer < shape.model().layers(); layer++) {
        spend(prefillCost.multipliedBy(tokens.length - from));
        pool.writeTokens(blocks, from, tokens.length, kv, layer, layer + 1);
        saved.accept(layer);
      }
    }
    return kv;
  }

  /** The KV of tokens {@code [from, end)} of {@code tokens}, in token order; empty if none. */
  private byte[] computeKv(int[] tokens, int from) {
    int to = tokens.length;
    if (from >= to) {
      return new byte[0];
    }
    int bytesPerToken = model.bytesPerToken();
    byte[] kv = new byte[(to - from) * bytesPerToken];
    model.computeKv(
        tokens,
        from,
        to,
        (i, token) -> System.arraycopy(token, 0, kv, (i - from) * bytesPerToken, bytesPerToken));
    return kv;
  }

  /** Spends {@code time} on the engine thread, as computing would. */
  private static void spend(Duration time) {
    long until = System.nanoTime() + time.toNanos();
    for (long left = time.toNanos(); left > 0; left = until - System.nanoTime()) {
      if (left > SPIN_NANOS) {
        LockSupport.parkNanos(left - SPIN_NANOS);
      } else {
        Thread.onSpinWait();
      }
    }
  }
}
