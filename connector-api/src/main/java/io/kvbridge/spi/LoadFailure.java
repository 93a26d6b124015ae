package io.kvbridge.spi;

import java.util.List;

/**
 * A load that did not deliver validated KV. The engine must not decode from {@code localBlockIds};
 * it applies its {@link LoadFailurePolicy} to the request. Blocks the engine lent below the load's
 * first token ({@link LoadMatch.Ready#firstToken()}) were never written and are not named: their
 * contents are what the engine put there.
 *
 * @param requestId the request's id on the consumer
 * @param localBlockIds the consumer's blocks the load may have written, whose contents are now
 *     undefined, in token order
 * @param reason why, for the error the client sees and for logs
 */
public record LoadFailure(String requestId, List<Integer> localBlockIds, String reason) {

  /** Copies the block list. */
  public LoadFailure {
    localBlockIds = List.copyOf(localBlockIds);
  }
}
