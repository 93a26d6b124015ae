package io.kvbridge.spi;

import java.util.Optional;

/**
 * The scheduler side's answer to a finished request.
 *
 * @param delayFree {@code true}: the engine must keep every block of the request until {@link
 *     WorkerSide#getFinished} reports it in {@code doneSending}; {@code false}: free them now
 * @param params what D needs to read the blocks, present exactly when {@code delayFree}
 */
public record FinishDecision(boolean delayFree, Optional<TransferParams> params) {

  /** Free the blocks now; nothing will read them. */
  public static FinishDecision freeNow() {
    return new FinishDecision(false, Optional.empty());
  }

  /** Keep the blocks for a consumer that reads them with {@code params}. */
  public static FinishDecision holdFor(TransferParams params) {
    return new FinishDecision(true, Optional.of(params));
  }
}
