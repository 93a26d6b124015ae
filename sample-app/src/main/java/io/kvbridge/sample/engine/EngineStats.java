package io.kvbridge.sample.engine;

/**
 * A snapshot of an engine's counters.
 *
 * @param engineId the engine's id
 * @param tpDegree the engine's tensor-parallel ranks
 * @param blockCount blocks in the pool (every rank has the same block ids)
 * @param heldBlocks blocks requests hold now (in progress, or kept for consumers); the prefix
 *     cache's are not counted
 * @param prefixCacheBlocks blocks the prefix cache keeps now
 * @param heldForTransfer requests whose blocks are kept until their lease ends
 * @param waiting requests waiting for free blocks or for a producer's confirmation
 * @param loading requests whose KV is being loaded
 * @param completed requests that produced output
 * @param failed requests that ended with an error
 * @param loadedBlocks blocks a producer's KV was loaded into, validated
 * @param loadedTokens prompt tokens whose KV was loaded from a producer
 * @param cachedTokens prompt tokens whose KV was copied from the prefix cache
 * @param computedTokens prompt tokens whose KV was computed on this engine
 * @param recomputed requests whose load failed and were computed here instead
 * @param steps steps the engine's loop has begun
 * @param streamed requests whose lease was granted as their prefill started, each layer read by the
 *     decode node while the next ones computed
 */
public record EngineStats(
    String engineId,
    int tpDegree,
    int blockCount,
    int heldBlocks,
    int prefixCacheBlocks,
    int heldForTransfer,
    int waiting,
    int loading,
    long completed,
    long failed,
    long loadedBlocks,
    long loadedTokens,
    long cachedTokens,
    long computedTokens,
    long recomputed,
    long steps,
    long streamed) {}
