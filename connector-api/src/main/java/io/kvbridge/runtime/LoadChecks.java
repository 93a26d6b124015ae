package io.kvbridge.runtime;

import io.kvbridge.spi.KvLayout;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.wire.HandshakeAddress;
import java.util.List;
import java.util.Optional;

/**
 * The consumer's checks of untrusted input, each returning what is wrong or nothing: transfer
 * parameters before a load is accepted, and the content of blocks after a read, before P is asked
 * to validate it. Stateless.
 */
final class LoadChecks {

  private LoadChecks() {}

  /** What makes {@code params} unusable on an engine of {@code layout}, if anything. */
  static Optional<String> shapeProblem(TransferParams params, TokenIds prompt, KvLayout layout) {
    if (params.tokens() > prompt.size()) {
      return Optional.of("tokens " + params.tokens() + " exceed the prompt's " + prompt.size());
    }
    if ((long) params.blockIds().size() * layout.tokensPerBlock() != params.tokens()) {
      return Optional.of(
          params.blockIds().size()
              + " blocks of "
              + layout.tokensPerBlock()
              + " tokens cannot hold "
              + params.tokens()
              + " tokens");
    }
    try {
      params.handshakeAddress().ifPresent(HandshakeAddress::parse);
    } catch (IllegalArgumentException e) {
      return Optional.of("handshake_address " + e.getMessage());
    }
    if (params.blockIds().size() > layout.blockCount()) {
      return Optional.of(
          params.blockIds().size() + " blocks exceed this engine's pool of " + layout.blockCount());
    }
    return Optional.empty();
  }

  /** Whether {@code params} were granted for this request's own prompt. */
  static Optional<String> promptProblem(TransferParams params, TokenIds prompt) {
    if (prompt.digest(params.tokens()).equals(params.promptDigest())) {
      return Optional.empty();
    }
    return Optional.of(
        "prompt_digest is not the digest of this request's first "
            + params.tokens()
            + " prompt tokens: the parameters belong to another prompt");
  }

  /** The first block id at or above the producer's pool size, described, if any. */
  static Optional<String> blockOutsidePool(TransferParams params, int producerBlockCount) {
    for (int id : params.blockIds()) {
      if (id >= producerBlockCount) {
        return Optional.of(
            "block id "
                + id
                + " is outside the producer's pool of "
                + producerBlockCount
                + " blocks");
      }
    }
    return Optional.empty();
  }

  /**
   * Compares each block read into {@code localBlocks} with the checksum P recorded at grant; names
   * the first mismatch.
   */
  static Optional<String> contentProblem(
      TransferParams params, KvMemory memory, int blockBytes, List<Integer> localBlocks) {
    for (int i = 0; i < params.blockIds().size(); i++) {
      int actual =
          params
              .checksumScheme()
              .checksum(memory, (long) localBlocks.get(i) * blockBytes, blockBytes);
      int expected = params.blockChecksums().get(i);
      if (actual != expected) {
        return Optional.of(
            "block "
                + params.blockIds().get(i)
                + " of producer "
                + params.producerEngineId()
                + " arrived with "
                + params.checksumScheme().wireName()
                + " "
                + Integer.toHexString(actual)
                + ", the lease recorded "
                + Integer.toHexString(expected));
      }
    }
    return Optional.empty();
  }
}
