package io.kvbridge.runtime.consumer;

import io.kvbridge.integrity.ChecksumInput;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.net.HandshakeAddress;
import io.kvbridge.runtime.engine.Ranks;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The consumer's checks of untrusted input, each returning what is wrong or nothing: transfer
 * parameters before a load is accepted, and the content of blocks after a read, before P is asked
 * to validate it. Stateless.
 */
final class LoadChecks {

  private LoadChecks() {}

  /**
   * What makes {@code params} unusable on an engine of {@code layout}, if anything; what depends on
   * the producer's shape is checked once its handshake is known ({@link #peerProblem}).
   */
  static Optional<String> shapeProblem(TransferParams params, TokenIds prompt, KvLayout layout) {
    if (params.tokens() > prompt.size()) {
      return Optional.of("tokens " + params.tokens() + " exceed the prompt's " + prompt.size());
    }
    try {
      params.handshakeAddress().ifPresent(HandshakeAddress::parse);
    } catch (IllegalArgumentException e) {
      return Optional.of("handshake_address " + e.getMessage());
    }
    long needed = ((long) params.tokens() + layout.tokensPerBlock() - 1) / layout.tokensPerBlock();
    if (needed > layout.blockCount()) {
      return Optional.of(
          params.tokens()
              + " tokens need "
              + needed
              + " blocks, more than this engine's pool of "
              + layout.blockCount());
    }
    return Optional.empty();
  }

  /**
   * What makes {@code params} unusable against the producer {@code peer} answered for, if anything:
   * the block list must hold exactly the lease's tokens in the producer's block size, every id must
   * lie in its pool, there must be one checksum list per producer rank, and the shapes must be
   * translatable.
   */
  static Optional<String> peerProblem(
      TransferParams params, ProducerPeer peer, List<KvLayout> consumer) {
    KvLayout producer = peer.layouts().get(0);
    Optional<String> held = blocksHoldProblem(params.blockIds().size(), producer, params.tokens());
    if (held.isPresent()) {
      return held;
    }
    for (int id : params.blockIds()) {
      if (id >= peer.blockCount()) {
        return Optional.of(
            "block id "
                + id
                + " is outside the producer's pool of "
                + peer.blockCount()
                + " blocks");
      }
    }
    if (!params.streamed() && params.blockChecksums().size() != peer.ranks().size()) {
      return Optional.of(
          "block_checksums has "
              + params.blockChecksums().size()
              + " lists; the producer has "
              + peer.ranks().size()
              + " ranks");
    }
    for (KvLayout d : consumer) {
      Optional<String> incompatible = d.incompatibilityWith(producer);
      if (incompatible.isPresent()) {
        return Optional.of("producer shape cannot be translated: " + incompatible.get());
      }
    }
    return Optional.empty();
  }

  /**
   * What keeps {@code blocks} blocks of {@code layout} from holding exactly {@code tokens} tokens
   * (every block full but the last, which holds at least one), if anything.
   */
  static Optional<String> blocksHoldProblem(long blocks, KvLayout layout, int tokens) {
    int perBlock = layout.tokensPerBlock();
    if (tokens > blocks * perBlock || tokens <= (blocks - 1) * perBlock) {
      return Optional.of(
          blocks + " blocks of " + perBlock + " tokens do not hold exactly " + tokens + " tokens");
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

  /**
   * Compares each producer block read, reassembled from where its pieces landed on the consumer's
   * ranks, with the checksum P recorded at grant; names the first mismatch.
   */
  static Optional<String> contentProblem(
      TransferParams params, TransferPlanner.Request plan, Ranks ranks) {
    return contentProblem(params, plan, ranks, plan.firstBlock(), plan.producerBlocks().size());
  }

  /** {@link #contentProblem} of the producer blocks {@code [fromIndex, toIndex)} alone. */
  static Optional<String> contentProblem(
      TransferParams params,
      TransferPlanner.Request plan,
      Ranks ranks,
      int fromIndex,
      int toIndex) {
    return contentProblem(
        params,
        plan,
        ranks,
        fromIndex,
        toIndex,
        TransferPlanner.Layers.all(plan),
        (q, index) -> params.blockChecksums().get(q).get(index),
        "");
  }

  /**
   * Compares producer blocks {@code [fromIndex, toIndex)} of a streamed read (one stage of it),
   * layer by layer, with the checksums its producer announced for the layers {@code layers}: {@code
   * announced.get(q).get(l).get(index)} is rank {@code q}'s checksum of layer {@code layers.from()
   * + l} of block {@code index}.
   */
  static Optional<String> layerProblem(
      TransferParams params,
      TransferPlanner.Request plan,
      Ranks ranks,
      int fromIndex,
      int toIndex,
      TransferPlanner.Layers layers,
      List<List<List<Integer>>> announced) {
    for (int layer = layers.from(); layer < layers.to(); layer++) {
      int l = layer - layers.from();
      Optional<String> problem =
          contentProblem(
              params,
              plan,
              ranks,
              fromIndex,
              toIndex,
              new TransferPlanner.Layers(layer, layer + 1),
              (q, index) -> announced.get(q).get(l).get(index),
              " layer " + layer);
      if (problem.isPresent()) {
        return problem;
      }
    }
    return Optional.empty();
  }

  /** The checksum the producer recorded of one of its rank's blocks (or of one layer of it). */
  @FunctionalInterface
  private interface Expected {
    int of(int producerRank, int index);
  }

  private static Optional<String> contentProblem(
      TransferParams params,
      TransferPlanner.Request plan,
      Ranks ranks,
      int fromIndex,
      int toIndex,
      TransferPlanner.Layers layers,
      Expected expected,
      String what) {
    boolean everyLayer = layers.coversEvery(plan.producer().get(0));
    for (int q = 0; q < plan.producer().size(); q++) {
      for (int index = Math.max(fromIndex, plan.firstBlock()); index < toIndex; index++) {
        List<ChecksumInput.Range> landed = new ArrayList<>();
        TransferPlanner.SegmentSink into =
            (producerRank, producerOffset, consumerRank, consumerOffset, length) ->
                landed.add(
                    ChecksumInput.Range.at(ranks.memory(consumerRank), consumerOffset, length));
        TransferPlanner.segments(
            plan,
            q,
            index,
            everyLayer ? into : TransferPlanner.clipped(plan, q, index, layers, into));
        if (landed.isEmpty()) {
          continue; // every head of rank q was read from another producer rank that holds it
        }
        int actual = params.checksumScheme().checksum(ChecksumInput.of(landed));
        int recorded = expected.of(q, index);
        if (actual != recorded) {
          return Optional.of(
              "block "
                  + params.blockIds().get(index)
                  + what
                  + " of producer "
                  + params.producerEngineId()
                  + " rank "
                  + q
                  + " arrived with "
                  + params.checksumScheme().wireName()
                  + " "
                  + Integer.toHexString(actual)
                  + ", the lease recorded "
                  + Integer.toHexString(recorded));
        }
      }
    }
    return Optional.empty();
  }
}
