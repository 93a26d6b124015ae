package io.kvbridge.sample.engine;

import io.kvbridge.spi.TransferParams;
import java.util.List;
import java.util.Optional;

/**
 * What the engine produced for a request.
 *
 * @param requestId the engine's request id
 * @param words the generated words
 * @param promptTokens the prompt's length in tokens
 * @param kvSource where the prompt's KV came from
 * @param loadedTokens prompt tokens whose KV was loaded from a producer (0 unless {@link
 *     KvSource#LOADED})
 * @param transferParams present when a decode node may now read this request's blocks
 */
public record Generation(
    String requestId,
    List<String> words,
    int promptTokens,
    KvSource kvSource,
    int loadedTokens,
    Optional<TransferParams> transferParams) {

  /** Copies the word list. */
  public Generation {
    words = List.copyOf(words);
  }

  /** The completion text. */
  public String text() {
    return ToyModel.text(words);
  }

  /** Where a request's prompt KV came from. */
  public enum KvSource {
    /** Computed on this engine. */
    COMPUTED,
    /** Full blocks loaded from a producer, the partial tail computed here. */
    LOADED,
    /** The load failed and the load-failure policy recomputed the prompt here. */
    RECOMPUTED
  }
}
