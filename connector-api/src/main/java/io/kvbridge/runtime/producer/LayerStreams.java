package io.kvbridge.runtime.producer;

import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.runtime.engine.BlockChecksums;
import io.kvbridge.runtime.engine.Ranks;
import io.kvbridge.wire.LeaseRef;
import io.kvbridge.wire.ProtocolMessage;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The leases P streams: granted when a request's prefill starts, their layers announced to the
 * consumer that confirmed them as every rank saves them. Per request it keeps how many layers each
 * rank saved (in order, layer 0 first), each saved layer's checksums per block, the watermark (the
 * layers every rank saved) and, per consumer agent that confirmed the lease, how many layers it was
 * told of.
 *
 * <p>A request is streaming from {@link #start} until its lease ends and the engine finished it
 * ({@link #finish}); the ids of streamed leases that ended while the engine still computed are kept
 * back from {@code doneSending} until it finishes them, so that an engine never frees the blocks of
 * a request it still computes into.
 *
 * <p>Threads: every method holds this object's monitor; engine threads of every rank, the progress
 * thread and the sweep call it.
 */
final class LayerStreams {

  private final Ranks ranks;
  private final Map<String, Stream> streams = new HashMap<>();
  // Streamed leases that ended while their request was still computing: reported once finished.
  private final Set<String> endedWhileComputing = new HashSet<>();

  LayerStreams(Ranks ranks) {
    this.ranks = ranks;
  }

  /**
   * Starts streaming the lease {@code lease} of {@code blocks}, holding {@code tokens} tokens,
   * whose layers are fingerprinted with {@code scheme}.
   */
  synchronized void start(LeaseRef lease, List<Integer> blocks, int tokens, ChecksumScheme scheme) {
    streams.put(
        lease.requestId(),
        new Stream(lease, blocks, tokens, ranks.layout(0).layers(), ranks.count(), scheme));
  }

  /**
   * Whether one layer's checksums of a lease of {@code blocks} blocks on {@code rankCount} ranks
   * fit one LAYERS message; a lease whose do not is not streamed.
   */
  static boolean fits(String requestId, int rankCount, int blocks) {
    return ProtocolMessage.Layers.encodedBytes(requestId, rankCount, 1, blocks)
        <= ProtocolMessage.MAX_BYTES;
  }

  /**
   * Whether {@code requestId}'s lease is streamed and the engine still computes its request: its
   * blocks are not the engine's to free, even if the lease ended.
   */
  synchronized boolean computing(String requestId) {
    Stream stream = streams.get(requestId);
    return (stream != null && !stream.finished) || endedWhileComputing.contains(requestId);
  }

  /**
   * Rank {@code rank} saved layer {@code layer} of {@code requestId}: its checksums are recorded.
   * Returns whether the watermark moved. A request that is not streamed is ignored (an engine may
   * report every layer of every request).
   *
   * @throws IllegalArgumentException if the layer is not the rank's next one
   */
  synchronized boolean saved(int rank, String requestId, int layer) {
    Stream stream = streams.get(requestId);
    if (stream == null || stream.finished) {
      return false;
    }
    if (layer != stream.saved[rank]) {
      throw new IllegalArgumentException(
          "rank "
              + rank
              + " saved layer "
              + layer
              + " of "
              + requestId
              + "; its next layer is "
              + stream.saved[rank]
              + " (layers are saved in order, each once, 0 to "
              + (stream.layers - 1)
              + ")");
    }
    stream.checksums.get(rank).add(checksums(stream, rank, layer, layer + 1).get(0));
    stream.saved[rank]++;
    return stream.watermarkMoved();
  }

  /**
   * The engine finished (or aborted) {@code requestId}: with {@code complete}, every layer a rank
   * has not saved yet counts as saved now (the engine says its KV is complete). Returns whether the
   * lease ended while the request computed and was kept back from {@code doneSending}: its blocks
   * are the engine's again at once, and it is never reported.
   */
  synchronized boolean finish(String requestId, boolean complete) {
    Stream stream = streams.get(requestId);
    if (stream != null) {
      stream.finished = true;
      if (complete) {
        for (int rank = 0; rank < stream.saved.length; rank++) {
          if (stream.saved[rank] < stream.layers) {
            stream
                .checksums
                .get(rank)
                .addAll(checksums(stream, rank, stream.saved[rank], stream.layers));
            stream.saved[rank] = stream.layers;
          }
        }
        stream.watermarkMoved();
      }
    }
    return endedWhileComputing.remove(requestId);
  }

  /**
   * The lease of {@code requestId} ends other than READ (revoked): the consumer agents it was
   * announced to, which are told so, and the lease named as they know it; the stream is kept until
   * the engine finishes the request.
   */
  synchronized Optional<Map.Entry<LeaseRef, List<String>>> ending(String requestId) {
    Stream stream = streams.get(requestId);
    if (stream == null || stream.told.isEmpty()) {
      return Optional.empty();
    }
    List<String> agents = List.copyOf(stream.told.keySet());
    stream.told.clear();
    return Optional.of(Map.entry(stream.lease, agents));
  }

  /** Every request streamed now. */
  synchronized List<String> requests() {
    return List.copyOf(streams.keySet());
  }

  /** Whether every layer of {@code requestId} was announced, or it is not streamed. */
  synchronized boolean complete(String requestId) {
    Stream stream = streams.get(requestId);
    return stream == null || stream.watermark == stream.layers;
  }

  /**
   * A consumer agent confirmed {@code requestId}'s lease: it is told of every layer announced, from
   * the first, by the next {@link #announcements}.
   */
  synchronized void confirmedBy(String requestId, String agent) {
    Stream stream = streams.get(requestId);
    if (stream != null) {
      stream.told.put(agent, 0);
    }
  }

  /**
   * The LAYERS messages due, by consumer agent: for each agent that confirmed a streamed lease, the
   * layers announced since it was last told, split so that each message fits {@link
   * ProtocolMessage#MAX_BYTES}; they count as sent. Streams whose lease ended are dropped (their
   * ids kept back from {@code doneSending} while their request still computes).
   */
  synchronized List<Map.Entry<String, ProtocolMessage.Layers>> announcements(
      Predicate<String> live) {
    List<Map.Entry<String, ProtocolMessage.Layers>> out = new ArrayList<>();
    for (var it = streams.values().iterator(); it.hasNext(); ) {
      Stream stream = it.next();
      if (!live.test(stream.lease.requestId())) {
        if (!stream.finished) {
          endedWhileComputing.add(stream.lease.requestId());
        }
        it.remove();
        continue;
      }
      for (Map.Entry<String, Integer> told : stream.told.entrySet()) {
        int from = told.getValue();
        while (from < stream.watermark) {
          int to = Math.min(stream.watermark, from + stream.layersPerMessage());
          out.add(Map.entry(told.getKey(), stream.message(from, to)));
          from = to;
        }
        told.setValue(from);
      }
    }
    return out;
  }

  /**
   * Of the requests whose leases ended, those the engine may free now: a streamed request still
   * computing is kept back until it finishes.
   */
  synchronized Set<String> releasable(Set<String> ended) {
    Set<String> out = new HashSet<>(ended);
    for (String id : ended) {
      if (computing(id)) {
        endedWhileComputing.add(id);
        out.remove(id);
      }
    }
    return out;
  }

  /**
   * The most layers one LAYERS message of {@code requestId}'s lease of {@code blocks} blocks on
   * {@code rankCount} ranks may carry and fit {@link ProtocolMessage#MAX_BYTES}; at least 1 (a
   * lease whose one layer does not fit is not streamed: {@link #fits}).
   */
  static int layersPerMessage(String requestId, int rankCount, int blocks) {
    int fixed = ProtocolMessage.Layers.encodedBytes(requestId, rankCount, 0, blocks);
    int perLayer = 4 * rankCount * blocks;
    return Math.max(1, (ProtocolMessage.MAX_BYTES - fixed) / perLayer);
  }

  private List<List<Integer>> checksums(Stream stream, int rank, int fromLayer, int toLayer) {
    List<List<Integer>> out = new ArrayList<>(toLayer - fromLayer);
    for (int layer = fromLayer; layer < toLayer; layer++) {
      out.add(
          BlockChecksums.ofLayers(
              stream.scheme, ranks.memory(rank), stream.blocks, stream.tokens, layer, layer + 1));
    }
    return out;
  }

  /** One streamed lease. */
  private static final class Stream {
    final LeaseRef lease;
    final List<Integer> blocks;
    final int tokens;
    final int layers;
    final ChecksumScheme scheme;
    final int[] saved;
    // By rank, by layer saved: the checksum of each block.
    final List<List<List<Integer>>> checksums;
    final Map<String, Integer> told = new LinkedHashMap<>();
    int watermark;
    boolean finished;

    Stream(
        LeaseRef lease,
        List<Integer> blocks,
        int tokens,
        int layers,
        int rankCount,
        ChecksumScheme scheme) {
      this.lease = lease;
      this.scheme = scheme;
      this.blocks = List.copyOf(blocks);
      this.tokens = tokens;
      this.layers = layers;
      this.saved = new int[rankCount];
      this.checksums = new ArrayList<>(rankCount);
      for (int rank = 0; rank < rankCount; rank++) {
        checksums.add(new ArrayList<>(layers));
      }
    }

    boolean watermarkMoved() {
      int low = layers;
      for (int s : saved) {
        low = Math.min(low, s);
      }
      boolean moved = low > watermark;
      watermark = low;
      return moved;
    }

    int layersPerMessage() {
      return LayerStreams.layersPerMessage(lease.requestId(), saved.length, blocks.size());
    }

    ProtocolMessage.Layers message(int from, int to) {
      List<List<List<Integer>>> byRank = new ArrayList<>(saved.length);
      for (List<List<Integer>> rank : checksums) {
        byRank.add(rank.subList(from, to));
      }
      return new ProtocolMessage.Layers(lease, from, to, byRank);
    }
  }
}
