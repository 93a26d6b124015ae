package io.kvbridge.sample.engine;

import io.kvbridge.spi.TransferParams;
import java.util.Objects;
import java.util.Optional;

/**
 * One completion request as the engine sees it.
 *
 * @param requestId unique among this engine's requests in flight
 * @param prompt the prompt text
 * @param maxTokens how many words to generate, at least 1
 * @param remoteDecode a decode node will read this request's KV (P side): the engine asks the
 *     connector to hold its blocks under a lease and returns the transfer parameters
 * @param transferParams a producer's parameters (D side): the engine loads the prompt's blocks from
 *     that producer instead of computing them
 */
public record EngineRequest(
    String requestId,
    String prompt,
    int maxTokens,
    boolean remoteDecode,
    Optional<TransferParams> transferParams) {

  /** Checks the values a caller controls. */
  public EngineRequest {
    Objects.requireNonNull(requestId, "requestId");
    Objects.requireNonNull(prompt, "prompt");
    Objects.requireNonNull(transferParams, "transferParams");
    if (maxTokens < 1) {
      throw new InvalidPromptException(
          "max_tokens", "max_tokens must be at least 1, got " + maxTokens);
    }
  }

  /** A request computed entirely on this engine. */
  public static EngineRequest local(String requestId, String prompt, int maxTokens) {
    return new EngineRequest(requestId, prompt, maxTokens, false, Optional.empty());
  }
}
