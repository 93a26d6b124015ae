package io.kvbridge.sample.engine;

import io.kvbridge.layout.KvLayout;
import java.util.Objects;

/**
 * How one engine holds KV: the model's layout (every head, its block size, pool size and memory
 * order), how many tensor-parallel ranks split the heads, and how many blocks its prefix cache may
 * keep.
 *
 * @param model the whole model's layout: {@code headStart} 0 and every KV head; rank {@code r}
 *     holds {@code model.forRank(r, tpDegree)}
 * @param tpDegree the engine's tensor-parallel ranks; they split the KV heads equally, or, with
 *     more ranks than heads, hold each head on as many ranks (replicated KV)
 * @param prefixCacheBlocks how many blocks the prefix cache may keep, 0 to the pool's size; 0 turns
 *     it off
 */
public record EngineShape(KvLayout model, int tpDegree, int prefixCacheBlocks) {

  /** Checks that the ranks split the heads equally and that the cache fits the pool. */
  public EngineShape {
    Objects.requireNonNull(model, "model");
    if (model.headStart() != 0 || model.headCount() != model.kvHeads()) {
      throw new IllegalArgumentException(
          "an engine's model layout holds every KV head; rank layouts come from forRank");
    }
    boolean split = tpDegree >= 1 && model.kvHeads() % tpDegree == 0;
    boolean replicated = tpDegree > model.kvHeads() && tpDegree % model.kvHeads() == 0;
    if (!split && !replicated) {
      throw new IllegalArgumentException(
          "TP degree "
              + tpDegree
              + " neither splits the model's "
              + model.kvHeads()
              + " KV heads nor holds each on as many ranks");
    }
    if (prefixCacheBlocks < 0 || prefixCacheBlocks > model.blockCount()) {
      throw new IllegalArgumentException(
          "the prefix cache keeps 0 to "
              + model.blockCount()
              + " blocks (the pool's), got "
              + prefixCacheBlocks);
    }
  }

  /** An engine of one rank without a prefix cache. */
  public static EngineShape of(KvLayout model) {
    return new EngineShape(model, 1, 0);
  }

  /** The layout of rank {@code rank}: its share of the heads. */
  public KvLayout rank(int rank) {
    return model.forRank(rank, tpDegree);
  }

  /** Tokens per block. */
  public int tokensPerBlock() {
    return model.tokensPerBlock();
  }

  /** Blocks in the pool; every rank has the same block ids. */
  public int blockCount() {
    return model.blockCount();
  }

  /** Bytes of KV per token over every rank. */
  public int bytesPerToken() {
    return model.blockBytes() / model.tokensPerBlock();
  }
}
