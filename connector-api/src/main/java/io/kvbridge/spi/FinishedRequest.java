package io.kvbridge.spi;

import java.util.List;
import java.util.Objects;

/**
 * A request the engine finished, as the engine tells {@link SchedulerSide#requestFinished}.
 *
 * @param requestId the engine's request id
 * @param blockIds every block the request holds, in token order
 * @param prompt the request's prompt; a lease is bound to the digest of the tokens it holds
 * @param computedTokens how many prompt tokens the blocks hold KV for, at most {@code
 *     prompt.size()}
 * @param aborted whether the request was aborted rather than finished
 * @param remoteDecode whether a consumer will read this request's KV (the router asked for it)
 */
public record FinishedRequest(
    String requestId,
    List<Integer> blockIds,
    TokenIds prompt,
    int computedTokens,
    boolean aborted,
    boolean remoteDecode) {

  /** Copies the block list; rejects more computed tokens than the prompt has. */
  public FinishedRequest {
    Objects.requireNonNull(requestId, "requestId");
    Objects.requireNonNull(prompt, "prompt");
    blockIds = List.copyOf(blockIds);
    if (computedTokens < 0 || computedTokens > prompt.size()) {
      throw new IllegalArgumentException(
          "computedTokens must be 0 to the prompt's "
              + prompt.size()
              + " tokens, got "
              + computedTokens);
    }
  }
}
