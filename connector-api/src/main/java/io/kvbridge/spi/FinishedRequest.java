package io.kvbridge.spi;

import java.util.List;

/**
 * A request the engine finished, as the engine tells {@link SchedulerSide#requestFinished}.
 *
 * @param requestId the engine's request id
 * @param blockIds every block the request holds, in token order
 * @param computedTokens how many prompt tokens the blocks hold KV for
 * @param aborted whether the request was aborted rather than finished
 * @param remoteDecode whether a consumer will read this request's KV (the router asked for it)
 */
public record FinishedRequest(
    String requestId,
    List<Integer> blockIds,
    int computedTokens,
    boolean aborted,
    boolean remoteDecode) {

  /** Copies the block list. */
  public FinishedRequest {
    blockIds = List.copyOf(blockIds);
  }
}
