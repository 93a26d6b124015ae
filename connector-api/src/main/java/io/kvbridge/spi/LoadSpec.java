package io.kvbridge.spi;

import java.util.List;

/**
 * One load the worker side must start: read {@code params.blockIds()} from the producer into {@code
 * localBlockIds}.
 *
 * @param requestId the request's id on this (the consumer's) engine
 * @param params the producer's transfer parameters
 * @param localBlockIds the consumer's blocks, one per producer block, in the same order
 */
public record LoadSpec(String requestId, TransferParams params, List<Integer> localBlockIds) {

  /** Copies the block list. */
  public LoadSpec {
    localBlockIds = List.copyOf(localBlockIds);
  }
}
