package io.kvbridge.runtime.consumer;

import io.kvbridge.layout.KvLayout;
import java.util.AbstractList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Maps a lease's blocks on the producer's ranks onto the consumer's ranks and blocks, whatever
 * their tensor parallelism and block sizes: every (producer rank, block, layer, plane, head, token
 * range) lands at its (consumer rank, block, offset). A head several ranks hold (replicated KV: an
 * MLA latent, or more ranks than KV heads) reaches every consumer rank that holds it, each reading
 * it once from one of the producer ranks that hold it ({@link #readRange}). Stateless.
 *
 * <p>What is read: the used tokens of producer blocks {@code [firstBlock, blockIds.size())} — every
 * token of a full block, the first {@code tokens mod tokensPerBlock} of a partly filled tail block
 * — where {@code firstBlock} skips the tokens the consumer already holds, rounded down to a
 * multiple of both block sizes, so that every block read is read whole (its used part), which lets
 * the consumer check it against the producer's checksum.
 *
 * <p>The two sides' memory may differ in order and placement ({@link KvLayout.MemoryOrder}, {@link
 * KvLayout.Placement}): every vector lands where the consumer's layout puts it. Where both keep a
 * head's tokens adjacent (head-major) a head's tokens of a block are one piece; where both keep a
 * token's heads adjacent (block-major) a token's heads of one rank are one piece; where the orders
 * differ, one vector is. Pieces that are adjacent on both sides merge, so an identical cross-layer
 * shape reads each run of consecutive blocks as one piece.
 *
 * <p>Cost: one segment per (block, layer, plane, head) in head-major order; in block-major order
 * one per (block, layer, plane, token, consumer rank), or, where a consumer rank holds the same
 * heads as the producer rank, one per (block, layer, plane, consumer block); between different
 * orders one per vector; a block whose shape is identical on both sides is one segment per extent
 * ({@link KvLayout#extentBytes()}: one for a cross-layer block, one per layer or per layer and
 * plane otherwise). Merging costs no allocation beyond the pieces it keeps.
 */
final class TransferPlanner {

  private TransferPlanner() {}

  /**
   * What a load reads.
   *
   * @param producer the producer's ranks' layouts, by rank
   * @param consumer the consumer's ranks' layouts, by rank
   * @param producerBlocks the lease's block ids, shared by every producer rank, in token order
   * @param consumerBlocks the consumer's blocks for the prompt, shared by every consumer rank, in
   *     token order
   * @param tokens the tokens the lease holds
   * @param skipTokens the tokens the consumer already holds; rounded down to whole blocks of both
   */
  record Request(
      List<KvLayout> producer,
      List<KvLayout> consumer,
      List<Integer> producerBlocks,
      List<Integer> consumerBlocks,
      int tokens,
      int skipTokens) {

    /** The first producer block read. */
    int firstBlock() {
      int p = producer.get(0).tokensPerBlock();
      return effectiveSkip(p, consumer.get(0).tokensPerBlock(), tokens, skipTokens) / p;
    }

    /** The used tokens of producer block {@code index}. */
    int usedTokens(int index) {
      int p = producer.get(0).tokensPerBlock();
      return Math.min(p, tokens - index * p);
    }

    /** The consumer blocks the read needs: every block up to the one holding the last token. */
    int consumerBlocksNeeded() {
      int d = consumer.get(0).tokensPerBlock();
      return (tokens + d - 1) / d;
    }
  }

  /**
   * One piece of a read.
   *
   * @param producerRank the producer rank it is read from
   * @param producerOffset its offset in that rank's region
   * @param consumerRank the consumer rank it lands in
   * @param consumerOffset its offset in that rank's region
   * @param length its length in bytes
   */
  record Piece(
      int producerRank, long producerOffset, int consumerRank, long consumerOffset, long length) {

    Piece extendedBy(long bytes) {
      return new Piece(producerRank, producerOffset, consumerRank, consumerOffset, length + bytes);
    }

    /** Whether {@code next} starts where this piece, grown by {@code extra} bytes, ends. */
    boolean isFollowedBy(Piece next, long extra) {
      return next.producerRank == producerRank
          && next.consumerRank == consumerRank
          && next.producerOffset == producerOffset + length + extra
          && next.consumerOffset == consumerOffset + length + extra;
    }
  }

  /** Receives the segments of one producer block, in the producer's memory order. */
  @FunctionalInterface
  interface SegmentSink {
    void accept(
        int producerRank, long producerOffset, int consumerRank, long consumerOffset, long length);
  }

  /** A sink that adds every segment to {@code out} as a piece. */
  static SegmentSink collecting(List<Piece> out) {
    return (q, producerOffset, r, consumerOffset, length) ->
        out.add(new Piece(q, producerOffset, r, consumerOffset, length));
  }

  /**
   * The pieces of one (consumer rank, producer rank) pair, as primitives ({@link Triples}: a piece
   * costs 24 bytes, no object). Read as a list of {@link Piece}s (each made on access) or through
   * {@link #producerOffset}, {@link #consumerOffset} and {@link #length}.
   *
   * <p>A staged pair's pieces land in the consumer rank's staging area, not its KV memory: their
   * consumer offsets are offsets in the staging range the read was given, and {@link #scatter()}
   * says where the staged rows go once the READ is done.
   */
  static final class Pieces extends AbstractList<Piece> {
    private final int producerRank;
    private final int consumerRank;
    private final Triples triples = new Triples();
    private final Scatter scatter;

    Pieces(int producerRank, int consumerRank) {
      this(producerRank, consumerRank, null);
    }

    Pieces(int producerRank, int consumerRank, Scatter scatter) {
      this.producerRank = producerRank;
      this.consumerRank = consumerRank;
      this.scatter = scatter;
    }

    void add(long producerOffset, long consumerOffset, long length) {
      triples.add(producerOffset, consumerOffset, length);
    }

    long producerOffset(int i) {
      return triples.first(i);
    }

    long consumerOffset(int i) {
      return triples.second(i);
    }

    long length(int i) {
      return triples.third(i);
    }

    /** Where a staged pair's rows go after the READ; empty for a pair read in place. */
    Optional<Scatter> scatter() {
      return Optional.ofNullable(scatter);
    }

    @Override
    public Piece get(int i) {
      Objects.checkIndex(i, size());
      return new Piece(producerRank, producerOffset(i), consumerRank, consumerOffset(i), length(i));
    }

    @Override
    public int size() {
      return triples.size();
    }
  }

  /**
   * The local copies that finish a staged pair's read: each moves {@code rows} rows of {@link
   * #width} bytes, {@link #sourcePitch} apart in the staging area from a staging offset, to {@link
   * #targetPitch} apart in the consumer rank's KV memory from a rank offset ({@link
   * io.kvbridge.transfer.KvMemory#copyRows}). One copy per (block, layer, plane) and consumer block
   * the producer block's tokens fall in.
   *
   * @param sourcePitch a producer token's row: the producer rank's heads of one token
   * @param targetPitch a consumer token's row: the consumer rank's heads of one token
   * @param width the heads read of one token
   */
  record Scatter(int sourcePitch, int targetPitch, int width, Triples copies) {

    /**
     * A copy of {@code rows} rows from staging offset {@code source} to rank offset {@code target}.
     */
    void add(long source, long target, int rows) {
      copies.add(source, target, rows);
    }

    int copyCount() {
      return copies.size();
    }

    long source(int i) {
      return copies.first(i);
    }

    long target(int i) {
      return copies.second(i);
    }

    int rows(int i) {
      return (int) copies.third(i);
    }
  }

  /**
   * Triples of {@code long}s in chunks of {@value #CHUNK}: appending never copies what is held, and
   * a triple costs 24 bytes, no object.
   */
  static final class Triples {
    private static final int CHUNK = 4096;
    private long[][] chunks = new long[1][];
    private int size;

    void add(long first, long second, long third) {
      int chunk = size / CHUNK;
      if (chunk == chunks.length) {
        chunks = Arrays.copyOf(chunks, chunks.length * 2);
      }
      long[] c = chunks[chunk];
      if (c == null) {
        // The first chunk grows with the triples, so that a plan of a few pieces stays small.
        c = chunks[chunk] = new long[3 * Math.min(CHUNK, chunk == 0 ? 16 : CHUNK)];
      } else if (chunk == 0 && 3 * (size + 1) > c.length) {
        c = chunks[0] = Arrays.copyOf(c, Math.min(3 * CHUNK, c.length * 4));
      }
      int at = 3 * (size % CHUNK);
      c[at] = first;
      c[at + 1] = second;
      c[at + 2] = third;
      size++;
    }

    long first(int i) {
      return chunks[i / CHUNK][3 * (i % CHUNK)];
    }

    long second(int i) {
      return chunks[i / CHUNK][3 * (i % CHUNK) + 1];
    }

    long third(int i) {
      return chunks[i / CHUNK][3 * (i % CHUNK) + 2];
    }

    int size() {
      return size;
    }
  }

  /**
   * The tokens a consumer holding {@code skipTokens} of a lease's {@code tokens} does not read:
   * rounded down to whole blocks of both sides, so every block read is read whole.
   */
  static int effectiveSkip(
      int producerTokensPerBlock, int consumerTokensPerBlock, int tokens, int skipTokens) {
    // An integer ratio: the larger block size is a multiple of the smaller.
    int unit = Math.max(producerTokensPerBlock, consumerTokensPerBlock);
    return Math.min(skipTokens, tokens) / unit * unit;
  }

  /**
   * The pieces of {@code load}, merged, grouped by (consumer rank, producer rank): each group is
   * one READ.
   */
  static Map<RankPair, Pieces> plan(Request load) {
    return plan(load, load.firstBlock(), load.producerBlocks().size());
  }

  /**
   * The pieces of the producer blocks {@code [fromIndex, toIndex)} of {@code load} (those of them
   * read: from {@link Request#firstBlock()} on), merged, grouped by (consumer rank, producer rank).
   */
  static Map<RankPair, Pieces> plan(Request load, int fromIndex, int toIndex) {
    return plan(load, fromIndex, toIndex, Staging.NONE);
  }

  /**
   * Which (consumer rank, producer rank) pairs read through a staging area. Asked only of pairs
   * {@link #stageable}.
   */
  @FunctionalInterface
  interface Staging {
    Staging NONE = (consumerRank, producerRank) -> false;

    boolean stages(int consumerRank, int producerRank);
  }

  /**
   * {@link #plan(Request, int, int)}, with the pairs {@code staging} names read through a staging
   * area: such a pair's pieces are the producer's slabs, one per (block, layer, plane), landing one
   * after another from offset 0 of the pair's staging range ({@link #stagedBytes} long), and its
   * {@link Pieces#scatter()} holds the copies that put each token's heads where the consumer keeps
   * them.
   */
  static Map<RankPair, Pieces> plan(Request load, int fromIndex, int toIndex, Staging staging) {
    return plan(load, fromIndex, toIndex, Layers.all(load), staging);
  }

  /**
   * The layers {@code [from, to)} of the model: what one stage of a streamed read moves, once the
   * producer announced them computed.
   */
  record Layers(int from, int to) {
    Layers {
      if (from < 0 || from >= to) {
        throw new IllegalArgumentException("layers [" + from + ", " + to + ") are empty");
      }
    }

    /** Every layer of {@code load}'s model. */
    static Layers all(Request load) {
      return new Layers(0, load.producer().get(0).layers());
    }

    boolean coversEvery(KvLayout layout) {
      return from == 0 && to == layout.layers();
    }
  }

  /**
   * {@link #plan(Request, int, int, Staging)} of the layers {@code layers} alone: each piece is
   * clipped to those layers' slabs ({@link #clipped}); a read of some layers is never staged.
   */
  static Map<RankPair, Pieces> plan(
      Request load, int fromIndex, int toIndex, Layers layers, Staging staging) {
    boolean everyLayer = layers.coversEvery(load.producer().get(0));
    if (!everyLayer && staging != Staging.NONE) {
      throw new IllegalArgumentException("a read of some layers is not staged");
    }
    int producers = load.producer().size();
    int pairs = load.consumer().size() * producers;
    // Indexed by consumerRank * producers + producerRank, so that a segment costs no key object,
    // no hash lookup and no allocation: the pair's piece being grown is (openProducer[i],
    // openConsumer[i], openLength[i]); openLength[i] is 0 while the pair has none.
    long[] openProducer = new long[pairs];
    long[] openConsumer = new long[pairs];
    long[] openLength = new long[pairs];
    Pieces[] closed = new Pieces[pairs];
    Scatter[] scatters = new Scatter[pairs];
    long[] cursor = new long[pairs];
    int[] firstSeen = new int[pairs];
    int[] seen = {0};
    SegmentSink sink =
        (q, producerOffset, r, consumerOffset, length) -> {
          int i = r * producers + q;
          if (closed[i] == null) {
            firstSeen[seen[0]++] = i;
            closed[i] = new Pieces(q, r, scatters[i]);
          } else if (producerOffset == openProducer[i] + openLength[i]
              && consumerOffset == openConsumer[i] + openLength[i]) {
            openLength[i] += length;
            return;
          } else {
            closed[i].add(openProducer[i], openConsumer[i], openLength[i]);
          }
          openProducer[i] = producerOffset;
          openConsumer[i] = consumerOffset;
          openLength[i] = length;
        };
    int[][][] ranges = new int[load.consumer().size()][producers][];
    for (int r = 0; r < ranges.length; r++) {
      for (int q = 0; q < producers; q++) {
        ranges[r][q] = readRange(load, r, q);
        if (ranges[r][q] != null && stageable(load, r, q) && staging.stages(r, q)) {
          KvLayout d = load.consumer().get(r);
          KvLayout p = load.producer().get(q);
          scatters[r * producers + q] =
              new Scatter(
                  p.headCount() * p.vectorBytes(),
                  d.headCount() * d.vectorBytes(),
                  (ranges[r][q][1] - ranges[r][q][0]) * p.vectorBytes(),
                  new Triples());
        }
      }
    }
    for (int index = Math.max(fromIndex, load.firstBlock()); index < toIndex; index++) {
      for (int q = 0; q < producers; q++) {
        for (int r = 0; r < ranges.length; r++) {
          int i = r * producers + q;
          if (scatters[i] != null) {
            cursor[i] +=
                stagedSegments(load, q, r, ranges[r][q], index, cursor[i], scatters[i], sink);
          } else if (ranges[r][q] != null) {
            readSegments(
                load,
                q,
                r,
                ranges[r][q],
                index,
                everyLayer ? sink : clipped(load, q, index, layers, sink));
          }
        }
      }
    }
    Map<RankPair, Pieces> reads = new LinkedHashMap<>();
    for (int k = 0; k < seen[0]; k++) {
      int i = firstSeen[k];
      closed[i].add(openProducer[i], openConsumer[i], openLength[i]);
      reads.put(new RankPair(i / producers, i % producers), closed[i]);
    }
    return reads;
  }

  /**
   * Emits the segments of producer rank {@code q}'s block {@code index} that are read, in the
   * producer's memory order ({@link KvLayout#forEachUsedRange}), each with where it lands on the
   * consumer (a head several consumer ranks read from {@code q}: on the first of them).
   * Concatenated, their producer ranges are exactly the bytes the producer's checksum of that block
   * covers when the block is read (and nothing when every head of {@code q} is read from another
   * rank that holds it too).
   */
  static void segments(Request load, int q, int index, SegmentSink sink) {
    KvLayout p = load.producer().get(q);
    int pBlock = load.producerBlocks().get(index);
    int used = load.usedTokens(index);
    int firstToken = index * p.tokensPerBlock();
    int same = identicalConsumerRank(load, q);
    if (same >= 0 && used == p.tokensPerBlock()) {
      wholeBlock(load, q, same, pBlock, firstToken, sink);
      return;
    }
    int vector = p.vectorBytes();
    int sameHeads = sameHeadsConsumerRank(load, q);
    boolean rowsJoin =
        sameHeads >= 0 && p.headsAdjacent() && load.consumer().get(sameHeads).headsAdjacent();
    int[] checkers = new int[p.headCount()];
    for (int h = 0; h < checkers.length; h++) {
      checkers[h] = checkerOf(load, q, p.headStart() + h);
    }
    for (int layer = 0; layer < p.layers(); layer++) {
      for (int plane = 0; plane < p.planes(); plane++) {
        if (!p.headsAdjacent()) {
          // Head-major producer: each head's tokens in turn.
          for (int head = p.headStart(); head < p.headStart() + p.headCount(); head++) {
            int r = checkers[head - p.headStart()];
            if (r < 0) {
              continue;
            }
            KvLayout d = load.consumer().get(r);
            int t = 0;
            while (t < used) {
              int token = firstToken + t;
              int run = d.tokensAdjacent() ? runInConsumerBlock(d, token, used - t) : 1;
              sink.accept(
                  q,
                  p.offset(pBlock, layer, plane, head, t),
                  r,
                  landing(load, d, token, layer, plane, head),
                  (long) run * vector);
              t += run;
            }
          }
        } else if (rowsJoin) {
          // A token's heads are the same slice on both sides, adjacent on both: a run of tokens
          // within one consumer block is contiguous on both.
          KvLayout d = load.consumer().get(sameHeads);
          int row = p.headCount() * vector;
          int t = 0;
          while (t < used) {
            int token = firstToken + t;
            int run = runInConsumerBlock(d, token, used - t);
            sink.accept(
                q,
                p.offset(pBlock, layer, plane, p.headStart(), t),
                sameHeads,
                landing(load, d, token, layer, plane, p.headStart()),
                (long) run * row);
            t += run;
          }
        } else {
          // Token-major producer: each token's heads in turn, a run of them per consumer rank
          // where the consumer keeps a token's heads adjacent too, else head by head.
          for (int t = 0; t < used; t++) {
            int token = firstToken + t;
            int head = p.headStart();
            while (head < p.headStart() + p.headCount()) {
              int r = checkers[head - p.headStart()];
              if (r < 0) {
                head++;
                continue;
              }
              KvLayout d = load.consumer().get(r);
              int last =
                  d.headsAdjacent()
                      ? Math.min(p.headStart() + p.headCount(), d.headStart() + d.headCount())
                      : head + 1;
              sink.accept(
                  q,
                  p.offset(pBlock, layer, plane, head, t),
                  r,
                  landing(load, d, token, layer, plane, head),
                  (long) (last - head) * vector);
              head = last;
            }
          }
        }
      }
    }
  }

  /**
   * A sink that hands {@code sink} the part of each segment of producer rank {@code q}'s block
   * {@code index} that lies in a slab of {@code layers}, and nothing of the other layers. A segment
   * is a plain copy, so its part keeps the same distance between producer and consumer offsets. The
   * slabs are in memory order in every placement, so the parts keep the producer's memory order.
   */
  static SegmentSink clipped(Request load, int q, int index, Layers layers, SegmentSink sink) {
    KvLayout p = load.producer().get(q);
    int pBlock = load.producerBlocks().get(index);
    int planes = p.planes();
    long[] starts = new long[(layers.to() - layers.from()) * planes];
    for (int layer = layers.from(); layer < layers.to(); layer++) {
      for (int plane = 0; plane < planes; plane++) {
        starts[(layer - layers.from()) * planes + plane] = p.slabOffset(pBlock, layer, plane);
      }
    }
    long slab = p.slabBytes();
    return (producerRank, producerOffset, consumerRank, consumerOffset, length) -> {
      long end = producerOffset + length;
      for (long start : starts) {
        long from = Math.max(producerOffset, start);
        long to = Math.min(end, start + slab);
        if (from < to) {
          sink.accept(
              producerRank,
              from,
              consumerRank,
              consumerOffset + (from - producerOffset),
              to - from);
        }
      }
    };
  }

  /**
   * Emits what consumer rank {@code r} reads of producer rank {@code q}'s block {@code index}: the
   * used bytes of the heads {@code range} it takes from {@code q} ({@link #readRange}), each with
   * where it lands in {@code r}'s block. Pieces are as long as both memory shapes allow: a whole
   * block's extents between identical shapes; a token's heads where both keep them adjacent (and a
   * run of tokens where both hold the same heads); a head's tokens where both keep those adjacent;
   * otherwise vector by vector.
   */
  private static void readSegments(
      Request load, int q, int r, int[] range, int index, SegmentSink sink) {
    KvLayout p = load.producer().get(q);
    KvLayout d = load.consumer().get(r);
    int pBlock = load.producerBlocks().get(index);
    int used = load.usedTokens(index);
    int firstToken = index * p.tokensPerBlock();
    boolean allOfQ = range[0] == p.headStart() && range[1] == p.headStart() + p.headCount();
    if (allOfQ && sameShape(p, d) && used == p.tokensPerBlock()) {
      wholeBlock(load, q, r, pBlock, firstToken, sink);
      return;
    }
    int vector = p.vectorBytes();
    boolean headsJoin = p.headsAdjacent() && d.headsAdjacent();
    boolean tokensJoin = p.tokensAdjacent() && d.tokensAdjacent();
    // Where both hold exactly these heads, adjacent, consecutive tokens' rows are adjacent too.
    boolean rowsJoin =
        headsJoin && allOfQ && d.headStart() == p.headStart() && d.headCount() == p.headCount();
    int width = range[1] - range[0];
    for (int layer = 0; layer < p.layers(); layer++) {
      for (int plane = 0; plane < p.planes(); plane++) {
        if (headsJoin) {
          int t = 0;
          while (t < used) {
            int token = firstToken + t;
            int run = rowsJoin ? runInConsumerBlock(d, token, used - t) : 1;
            sink.accept(
                q,
                p.offset(pBlock, layer, plane, range[0], t),
                r,
                landing(load, d, token, layer, plane, range[0]),
                (long) run * width * vector);
            t += run;
          }
        } else {
          // Heads not adjacent on one side: each head's tokens, in runs where both keep a head's
          // tokens adjacent, else one vector at a time.
          for (int head = range[0]; head < range[1]; head++) {
            int t = 0;
            while (t < used) {
              int token = firstToken + t;
              int run = tokensJoin ? runInConsumerBlock(d, token, used - t) : 1;
              sink.accept(
                  q,
                  p.offset(pBlock, layer, plane, head, t),
                  r,
                  landing(load, d, token, layer, plane, head),
                  (long) run * vector);
              t += run;
            }
          }
        }
      }
    }
  }

  /**
   * Whether consumer rank {@code r} may read what it takes from producer rank {@code q} through a
   * staging area: both keep a token's heads adjacent (block-major) but hold different heads, so
   * that reading in place costs a piece per token, while a producer slab holds the heads read as
   * rows {@code p.headCount()} heads apart.
   */
  static boolean stageable(Request load, int r, int q) {
    int[] range = readRange(load, r, q);
    KvLayout p = load.producer().get(q);
    KvLayout d = load.consumer().get(r);
    boolean sameHeads =
        range != null
            && range[0] == p.headStart()
            && range[1] == p.headStart() + p.headCount()
            && d.headStart() == p.headStart()
            && d.headCount() == p.headCount();
    return range != null && p.headsAdjacent() && d.headsAdjacent() && !sameHeads;
  }

  /**
   * What a stageable pair's read of producer blocks {@code [fromIndex, toIndex)} costs each way.
   *
   * @param inPlaceDescriptors the pieces reading in place takes: one per token, layer and plane
   * @param stagedDescriptors the most pieces a staged read takes: one per block, layer and plane
   * @param bytes the bytes the consumer needs
   * @param stagedBytes the bytes a staged read moves: from the first head read of a slab's first
   *     token to the last head read of its last used token
   * @param copies the local copies that finish a staged read
   * @param rows the rows those copies move, one per token, layer and plane
   */
  record StagingEstimate(
      long inPlaceDescriptors,
      long stagedDescriptors,
      long bytes,
      long stagedBytes,
      long copies,
      long rows) {}

  /** {@link StagingEstimate} of a stageable pair's read of producer blocks {@code [from, to)}. */
  static StagingEstimate estimate(Request load, int r, int q, int fromIndex, int toIndex) {
    KvLayout p = load.producer().get(q);
    KvLayout d = load.consumer().get(r);
    int[] range = readRange(load, r, q);
    long width = (long) (range[1] - range[0]) * p.vectorBytes();
    long slabs = (long) p.layers() * p.planes();
    long tokens = 0;
    long blocks = 0;
    long copies = 0;
    for (int index = Math.max(fromIndex, load.firstBlock()); index < toIndex; index++) {
      int used = load.usedTokens(index);
      int first = index * p.tokensPerBlock();
      tokens += used;
      blocks++;
      copies += (first + used - 1) / d.tokensPerBlock() - first / d.tokensPerBlock() + 1;
    }
    return new StagingEstimate(
        slabs * tokens,
        slabs * blocks,
        slabs * tokens * width,
        stagedBytes(load, r, q, fromIndex, toIndex),
        slabs * copies,
        slabs * tokens);
  }

  /**
   * The staging bytes a staged read of producer blocks {@code [fromIndex, toIndex)} by consumer
   * rank {@code r} from producer rank {@code q} lands: what {@link #plan} with that pair staged
   * lays out from offset 0.
   */
  static long stagedBytes(Request load, int r, int q, int fromIndex, int toIndex) {
    KvLayout p = load.producer().get(q);
    int[] range = readRange(load, r, q);
    long sum = 0;
    for (int index = Math.max(fromIndex, load.firstBlock()); index < toIndex; index++) {
      sum += slabSpan(p, range, load.usedTokens(index));
    }
    return sum * p.layers() * p.planes();
  }

  /**
   * The bytes of a block-major slab from head {@code range[0]} of its first token to the last head
   * read of token {@code used - 1}.
   */
  private static long slabSpan(KvLayout p, int[] range, int used) {
    return (long) (used - 1) * p.headCount() * p.vectorBytes()
        + (long) (range[1] - range[0]) * p.vectorBytes();
  }

  /**
   * Emits the staged pieces of what consumer rank {@code r} reads of producer rank {@code q}'s
   * block {@code index}: each (layer, plane) slab's span of the heads read, landing at staging
   * offset {@code at} on, one after another, and adds to {@code scatter} the copies that put each
   * token's heads in place. Returns the staging bytes used.
   */
  private static long stagedSegments(
      Request load,
      int q,
      int r,
      int[] range,
      int index,
      long at,
      Scatter scatter,
      SegmentSink sink) {
    KvLayout p = load.producer().get(q);
    KvLayout d = load.consumer().get(r);
    int pBlock = load.producerBlocks().get(index);
    int used = load.usedTokens(index);
    int firstToken = index * p.tokensPerBlock();
    long span = slabSpan(p, range, used);
    long next = at;
    for (int layer = 0; layer < p.layers(); layer++) {
      for (int plane = 0; plane < p.planes(); plane++) {
        sink.accept(q, p.offset(pBlock, layer, plane, range[0], 0), r, next, span);
        int t = 0;
        while (t < used) {
          int token = firstToken + t;
          int run = runInConsumerBlock(d, token, used - t);
          scatter.add(
              next + (long) t * scatter.sourcePitch(),
              landing(load, d, token, layer, plane, range[0]),
              run);
          t += run;
        }
        next += span;
      }
    }
    return next - at;
  }

  /**
   * Emits a full producer block whose shape consumer rank {@code r} shares: its extents, in memory
   * order, each landing at the same extent of the consumer block holding the same tokens.
   */
  private static void wholeBlock(
      Request load, int q, int r, int pBlock, int firstToken, SegmentSink sink) {
    KvLayout p = load.producer().get(q);
    KvLayout d = load.consumer().get(r);
    int dBlock = load.consumerBlocks().get(firstToken / d.tokensPerBlock());
    for (int e = 0; e < p.extentsPerBlock(); e++) {
      sink.accept(q, p.extentOffset(pBlock, e), r, d.extentOffset(dBlock, e), p.extentBytes());
    }
  }

  /** How many of {@code left} tokens from {@code token} on lie in the same consumer block. */
  private static int runInConsumerBlock(KvLayout d, int token, int left) {
    return Math.min(left, d.tokensPerBlock() - token % d.tokensPerBlock());
  }

  /**
   * The rank offset where {@code head} of lease token {@code token} lands in consumer {@code d}.
   */
  private static long landing(Request load, KvLayout d, int token, int layer, int plane, int head) {
    int block = load.consumerBlocks().get(token / d.tokensPerBlock());
    return d.offset(block, layer, plane, head, token % d.tokensPerBlock());
  }

  /**
   * The heads {@code [from, to)} consumer rank {@code r} reads from producer rank {@code q}, or
   * null if none. A head held by one producer rank is read from it; a head several producer ranks
   * hold (replicated KV: an MLA latent, or fewer KV heads than ranks) is read once per consumer
   * rank that needs it, the readers of the head taking its holders in turn, so the reads spread
   * over the producer's ranks.
   */
  static int[] readRange(Request load, int r, int q) {
    KvLayout d = load.consumer().get(r);
    KvLayout p = load.producer().get(q);
    int from = Math.max(d.headStart(), p.headStart());
    int to = Math.min(d.headStart() + d.headCount(), p.headStart() + p.headCount());
    if (from >= to) {
      return null;
    }
    // Every rank holding one of these heads holds the same range (replicas are whole ranks), so
    // the first head decides for all.
    int holders = 0;
    int holderIndex = -1;
    for (int i = 0; i < load.producer().size(); i++) {
      if (load.producer().get(i).holds(from)) {
        if (i == q) {
          holderIndex = holders;
        }
        holders++;
      }
    }
    int position = 0;
    for (int i = 0; i < r; i++) {
      if (load.consumer().get(i).holds(from)) {
        position++;
      }
    }
    return position % holders == holderIndex ? new int[] {from, to} : null;
  }

  /** The first consumer rank that reads {@code head} from producer rank {@code q}, or -1. */
  private static int checkerOf(Request load, int q, int head) {
    for (int r = 0; r < load.consumer().size(); r++) {
      int[] range = load.consumer().get(r).holds(head) ? readRange(load, r, q) : null;
      if (range != null && head >= range[0] && head < range[1]) {
        return r;
      }
    }
    return -1;
  }

  /** The consumer rank whose shape is producer rank {@code q}'s exactly, or -1. */
  private static int identicalConsumerRank(Request load, int q) {
    int r = sameHeadsConsumerRank(load, q);
    return r >= 0 && sameShape(load.producer().get(q), load.consumer().get(r)) ? r : -1;
  }

  /**
   * The first consumer rank that holds exactly producer rank {@code q}'s heads and reads them from
   * {@code q}, or -1.
   */
  private static int sameHeadsConsumerRank(Request load, int q) {
    KvLayout p = load.producer().get(q);
    for (int r = 0; r < load.consumer().size(); r++) {
      KvLayout d = load.consumer().get(r);
      if (d.headStart() == p.headStart()
          && d.headCount() == p.headCount()
          && readRange(load, r, q) != null) {
        return r;
      }
    }
    return -1;
  }

  /**
   * Whether a block of {@code producer} and a block of {@code consumer} hold the same heads and
   * tokens in the same order, so that a whole block of one is a whole block of the other, byte for
   * byte. Both describe one model (the handshake refused any other pair).
   */
  static boolean sameShape(KvLayout producer, KvLayout consumer) {
    return consumer.headStart() == producer.headStart()
        && consumer.headCount() == producer.headCount()
        && consumer.tokensPerBlock() == producer.tokensPerBlock()
        && consumer.order() == producer.order()
        && consumer.placement() == producer.placement()
        && consumer.blockBytes() == producer.blockBytes();
  }

  /**
   * A consumer rank reading from a producer rank: one READ each.
   *
   * @param consumerRank the reading rank
   * @param producerRank the rank read from
   */
  record RankPair(int consumerRank, int producerRank) {}
}
