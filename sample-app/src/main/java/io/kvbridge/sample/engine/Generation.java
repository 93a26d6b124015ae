package io.kvbridge.sample.engine;

import io.kvbridge.spi.TransferParams;
import java.util.List;
import java.util.Optional;

/**
 * What the engine produced for a request, and where each prompt token's KV came from: {@code
 * cachedTokens + loadedTokens + computedTokens == promptTokens}.
 *
 * @param requestId the engine's request id
 * @param words the generated words
 * @param promptTokens the prompt's length in tokens
 * @param kvSource where the prompt's KV came from, as a whole
 * @param cachedTokens the prompt's first tokens, copied from this engine's prefix cache
 * @param loadedTokens prompt tokens whose KV was loaded from a producer
 * @param computedTokens prompt tokens computed on this engine
 * @param transferParams present when a decode node may now read this request's blocks
 */
public record Generation(
    String requestId,
    List<String> words,
    int promptTokens,
    KvSource kvSource,
    int cachedTokens,
    int loadedTokens,
    int computedTokens,
    Optional<TransferParams> transferParams) {

  /** Copies the word list and checks that every prompt token is counted once. */
  public Generation {
    words = List.copyOf(words);
    if (cachedTokens < 0
        || loadedTokens < 0
        || computedTokens < 0
        || cachedTokens + loadedTokens + computedTokens != promptTokens) {
      throw new IllegalArgumentException(
          "a prompt of "
              + promptTokens
              + " tokens cannot have "
              + cachedTokens
              + " cached, "
              + loadedTokens
              + " loaded and "
              + computedTokens
              + " computed");
    }
  }

  /** The completion text. */
  public String text() {
    return ToyModel.text(words);
  }

  /** Where a request's prompt KV came from. */
  public enum KvSource {
    /** No producer's KV: computed here, its start copied from the prefix cache where it held it. */
    COMPUTED,
    /**
     * Loaded from a producer, at least one token; the start may come from the prefix cache and
     * tokens past the producer's computed here.
     */
    LOADED,
    /**
     * The prefix cache held every token of the producer's lease: nothing was loaded, and the
     * producer was told to release the lease.
     */
    CACHED,
    /** The load failed and the load-failure policy computed the rest of the prompt here. */
    RECOMPUTED
  }
}
