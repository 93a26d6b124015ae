package io.kvbridge.spi;

import java.util.List;
import java.util.Objects;

/**
 * A request whose prefill P's engine starts, as the engine tells {@link
 * SchedulerSide#requestStarted}: its blocks are known and a consumer will read its KV.
 *
 * @param requestId the engine's request id
 * @param blockIds every block the request's prompt will be computed into, in token order
 * @param prompt the request's prompt; the lease is bound to the digest of the tokens it holds
 * @param tokens how many prompt tokens this prefill computes into the blocks, 1 to {@code
 *     prompt.size()}
 */
public record StartedRequest(
    String requestId, List<Integer> blockIds, TokenIds prompt, int tokens) {

  /** Copies the block list; rejects a token count outside the prompt. */
  public StartedRequest {
    Objects.requireNonNull(requestId, "requestId");
    Objects.requireNonNull(prompt, "prompt");
    blockIds = List.copyOf(blockIds);
    if (tokens < 1 || tokens > prompt.size()) {
      throw new IllegalArgumentException(
          "tokens must be 1 to the prompt's " + prompt.size() + " tokens, got " + tokens);
    }
  }
}
