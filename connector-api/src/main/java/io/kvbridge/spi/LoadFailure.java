package io.kvbridge.spi;

import java.util.List;

/**
 * A load that did not deliver validated KV. The engine must not decode from {@code localBlockIds};
 * it applies its {@link LoadFailurePolicy} to the request.
 *
 * @param requestId the request's id on the consumer
 * @param localBlockIds the consumer's blocks whose contents are undefined
 * @param reason why, for the error the client sees and for logs
 */
public record LoadFailure(String requestId, List<Integer> localBlockIds, String reason) {

  /** Copies the block list. */
  public LoadFailure {
    localBlockIds = List.copyOf(localBlockIds);
  }
}
