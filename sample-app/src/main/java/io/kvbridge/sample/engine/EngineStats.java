package io.kvbridge.sample.engine;

/**
 * A snapshot of an engine's counters.
 *
 * @param engineId the engine's id
 * @param blockCount blocks in the pool
 * @param heldBlocks blocks allocated now (requests in progress and blocks kept for consumers)
 * @param heldForTransfer requests whose blocks are kept until their lease ends
 * @param waiting requests waiting for free blocks
 * @param loading requests whose KV is being loaded
 * @param completed requests that produced output
 * @param failed requests that ended with an error
 * @param loadedBlocks blocks whose KV arrived from a producer and was validated
 * @param loadedTokens prompt tokens those blocks hold
 * @param recomputed requests whose load failed and were prefilled locally
 */
public record EngineStats(
    String engineId,
    int blockCount,
    int heldBlocks,
    int heldForTransfer,
    int waiting,
    int loading,
    long completed,
    long failed,
    long loadedBlocks,
    long loadedTokens,
    long recomputed) {}
