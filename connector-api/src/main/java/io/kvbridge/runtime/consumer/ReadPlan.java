package io.kvbridge.runtime.consumer;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.spi.ReadStaging;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What a consumer engine reads to load a lease from a producer engine, as the consumer's own
 * planner maps it: one READ per (consumer rank, producer rank) pair that exchanges bytes, each a
 * list of descriptors, a producer range and the consumer range it lands in. Lets an engine or a
 * tool preview a pairing of two shapes before it serves traffic: how many READs and descriptors a
 * request of a given length costs (what a transport is asked to handle per request) and how many
 * bytes it moves.
 *
 * <p>Offsets are each rank's <em>rank offsets</em> ({@link KvLayout#offset}): the region's index in
 * the high bits, the offset inside that region below them; for a cross-layer layout (one region) a
 * block {@code b} starts at {@code b * blockBytes()}.
 *
 * <p>Threads: immutable; any thread may read a plan.
 */
public final class ReadPlan {

  private final List<Read> reads;

  private ReadPlan(List<Read> reads) {
    this.reads = reads;
  }

  /**
   * Plans the read of a lease.
   *
   * @param producer the producer engine's layouts, by rank
   * @param consumer the consumer engine's layouts, by rank
   * @param producerBlocks the lease's block ids, shared by every producer rank, in token order
   * @param consumerBlocks the consumer's blocks for the prompt, shared by every consumer rank, in
   *     token order
   * @param tokens the tokens the lease holds
   * @param skipTokens the tokens the consumer already holds; rounded down to whole blocks of both
   *     sides, as the consumer does
   * @throws IllegalArgumentException naming what is wrong, if either side's ranks are not one
   *     engine's, the shapes cannot be translated, or the blocks do not hold the tokens
   */
  public static ReadPlan of(
      List<KvLayout> producer,
      List<KvLayout> consumer,
      List<Integer> producerBlocks,
      List<Integer> consumerBlocks,
      int tokens,
      int skipTokens) {
    return of(
        producer, consumer, producerBlocks, consumerBlocks, tokens, skipTokens, StagingModel.NEVER);
  }

  /**
   * Plans the read of a lease as a consumer whose ranks weigh staging by {@code staging} does: a
   * pair of ranks that split a token's heads differently is read staged where the model says so
   * ({@link Read#staged()}).
   *
   * @throws IllegalArgumentException as {@link #of(List, List, List, List, int, int)}
   */
  public static ReadPlan of(
      List<KvLayout> producer,
      List<KvLayout> consumer,
      List<Integer> producerBlocks,
      List<Integer> consumerBlocks,
      int tokens,
      int skipTokens,
      StagingModel staging) {
    Objects.requireNonNull(producer, "producer");
    Objects.requireNonNull(consumer, "consumer");
    Objects.requireNonNull(producerBlocks, "producerBlocks");
    Objects.requireNonNull(consumerBlocks, "consumerBlocks");
    problem(producer, consumer, producerBlocks, consumerBlocks, tokens, skipTokens)
        .ifPresent(
            why -> {
              throw new IllegalArgumentException("read plan: " + why);
            });
    TransferPlanner.Request load =
        new TransferPlanner.Request(
            producer, consumer, producerBlocks, consumerBlocks, tokens, skipTokens);
    List<Read> reads = new ArrayList<>();
    int blocks = producerBlocks.size();
    TransferPlanner.plan(
            load,
            load.firstBlock(),
            blocks,
            (r, q) ->
                staging.stages(TransferPlanner.estimate(load, r, q, load.firstBlock(), blocks)))
        .forEach((pair, pieces) -> reads.add(new Read(pair, pieces)));
    return new ReadPlan(List.copyOf(reads));
  }

  /**
   * The most stages a consumer splits a read into for its checks alone; a read larger than twice
   * its staging area takes more ({@link #stageBounds(int, int, long, long, long)}).
   */
  public static final int MAX_STAGES = 8;

  /** The fewest bytes (over every producer rank) of a stage: a smaller read is one stage. */
  public static final long MIN_STAGE_BYTES = 8L << 20;

  /**
   * The fewest bytes (over every producer rank) of a stage of a streamed request's layers: a layer
   * is already a stage of its own and READs of a megabyte move at full speed, so its blocks are
   * checked in smaller stages than a whole read's.
   */
  public static final long MIN_LAYER_STAGE_BYTES = 1L << 20;

  /**
   * The stages a consumer posts the read of producer blocks {@code [first, first + blocks)} in,
   * each its own READs, checked as soon as they finish while later stages still move: up to {@value
   * #MAX_STAGES} runs of consecutive blocks, the last two a half and a quarter of the others, so
   * that what is left to check once the last byte landed is a small stage; as many stages as keep
   * the last one at least {@code minStageBytes} ({@value #MIN_STAGE_BYTES} as the consumer posts
   * them); and more, as many as keep every stage at most {@code maxStageBytes} (half the consumer's
   * staging area, so that two stages fit it at once: {@link #maxStageBytes}), at the price of a
   * smaller last one. Split at whole blocks. Returns the stages' bounds: stage {@code s} is blocks
   * {@code [bounds[s], bounds[s + 1])}; at least one stage.
   *
   * @param bytes the bytes the blocks hold over every producer rank
   */
  public static int[] stageBounds(
      int first, int blocks, long bytes, long minStageBytes, long maxStageBytes) {
    int stages = 1;
    for (int n = Math.min(MAX_STAGES, blocks); n > 1; n--) {
      if (bytes * stageWeight(n, n - 1) / totalWeight(n) >= minStageBytes) {
        stages = n;
        break;
      }
    }
    while (stages < blocks && bytes / totalWeight(stages) > maxStageBytes) {
      stages++;
    }
    double total = totalWeight(stages);
    int[] bounds = new int[stages + 1];
    double weight = 0;
    for (int s = 0; s < stages; s++) {
      // Each stage at least one block, and room left for one block per later stage.
      int at = (int) Math.round(blocks * weight / total);
      bounds[s] = first + Math.min(Math.max(at, s), blocks - (stages - s));
      if (s > 0 && bounds[s] <= bounds[s - 1]) {
        bounds[s] = bounds[s - 1] + 1;
      }
      weight += stageWeight(stages, s);
    }
    bounds[stages] = first + blocks;
    return bounds;
  }

  /**
   * The most bytes (over every producer rank) of a stage a consumer reading by {@code staging}
   * posts: half its staging area, so that a stage's staged READs always fit it and two stages move
   * at once; no limit where it never stages.
   */
  public static long maxStageBytes(ReadStaging staging) {
    return staging.mode() == ReadStaging.Mode.NEVER ? Long.MAX_VALUE : staging.bytesPerRank() / 2;
  }

  /** Stage {@code s}'s share of {@code stages}: 1, but a half and a quarter for the last two. */
  private static double stageWeight(int stages, int s) {
    if (stages >= 3 && s == stages - 2) {
      return 0.5;
    }
    if (stages >= 2 && s == stages - 1) {
      return stages == 2 ? 0.5 : 0.25;
    }
    return 1;
  }

  private static double totalWeight(int stages) {
    double sum = 0;
    for (int s = 0; s < stages; s++) {
      sum += stageWeight(stages, s);
    }
    return sum;
  }

  /**
   * {@link #stageBounds(int, int, long, long, long)} of producer blocks {@code [first, first +
   * blocks)} of an engine of {@code producer}'s ranks: the bytes are those blocks on every rank.
   */
  public static int[] stageBounds(
      List<KvLayout> producer, int first, int blocks, long minStageBytes, long maxStageBytes) {
    long bytes = (long) blocks * producer.get(0).blockBytes() * producer.size();
    return stageBounds(first, blocks, bytes, minStageBytes, maxStageBytes);
  }

  /** The READs, one per (consumer rank, producer rank) pair that exchanges bytes. */
  public List<Read> reads() {
    return reads;
  }

  /** The descriptors of every READ together: what the transports are asked to handle. */
  public long descriptors() {
    long sum = 0;
    for (Read read : reads) {
      sum += read.descriptors();
    }
    return sum;
  }

  /** The bytes every READ together moves. Walks every descriptor. */
  public long bytes() {
    long sum = 0;
    for (Read read : reads) {
      sum += read.bytes();
    }
    return sum;
  }

  /**
   * One READ: what one consumer rank reads from one producer rank.
   *
   * <p>Threads: immutable; any thread may read it.
   */
  public static final class Read {

    private final TransferPlanner.RankPair pair;
    private final TransferPlanner.Pieces pieces;

    private Read(TransferPlanner.RankPair pair, TransferPlanner.Pieces pieces) {
      this.pair = pair;
      this.pieces = pieces;
    }

    /** The reading rank of the consumer engine. */
    public int consumerRank() {
      return pair.consumerRank();
    }

    /** The producer engine's rank read from. */
    public int producerRank() {
      return pair.producerRank();
    }

    /** How many descriptors the READ has on each side. */
    public int descriptors() {
      return pieces.size();
    }

    /** The bytes the READ moves. Walks every descriptor. */
    public long bytes() {
      long sum = 0;
      for (int i = 0; i < pieces.size(); i++) {
        sum += pieces.length(i);
      }
      return sum;
    }

    /**
     * Whether the READ lands in the consumer rank's staging area: its descriptors' consumer offsets
     * are then offsets in a staging range of {@link #stagingBytes()}, and {@link #forEachCopy}
     * gives the copies that put the rows in place.
     */
    public boolean staged() {
      return pieces.scatter().isPresent();
    }

    /** The staging bytes a staged READ lands in; 0 for one that lands in place. */
    public long stagingBytes() {
      long end = 0;
      for (int i = 0; staged() && i < pieces.size(); i++) {
        end = Math.max(end, pieces.consumerOffset(i) + pieces.length(i));
      }
      return end;
    }

    /** Hands every copy of a staged READ to {@code sink}, in order; none for one in place. */
    public void forEachCopy(CopySink sink) {
      pieces
          .scatter()
          .ifPresent(
              scatter -> {
                for (int i = 0; i < scatter.copyCount(); i++) {
                  sink.accept(
                      scatter.source(i),
                      scatter.sourcePitch(),
                      scatter.target(i),
                      scatter.targetPitch(),
                      scatter.width(),
                      scatter.rows(i));
                }
              });
    }

    /** Hands every descriptor to {@code sink}, in the order the consumer posts them. */
    public void forEachDescriptor(DescriptorSink sink) {
      for (int i = 0; i < pieces.size(); i++) {
        sink.accept(pieces.producerOffset(i), pieces.consumerOffset(i), pieces.length(i));
      }
    }

    @Override
    public String toString() {
      return "READ of consumer rank "
          + consumerRank()
          + " from producer rank "
          + producerRank()
          + ": "
          + descriptors()
          + " descriptors";
    }
  }

  /** Receives the copies of a staged {@link Read} ({@code KvMemory.copyRows}'s arguments). */
  @FunctionalInterface
  public interface CopySink {
    /**
     * One copy.
     *
     * @param stagingOffset where its first row starts in the staging range
     * @param stagingPitch how far apart its rows lie there
     * @param consumerOffset where its first row lands in the consumer rank's memory, as a rank
     *     offset
     * @param consumerPitch how far apart its rows land there
     * @param width the bytes of a row
     * @param rows how many rows
     */
    void accept(
        long stagingOffset,
        int stagingPitch,
        long consumerOffset,
        int consumerPitch,
        int width,
        int rows);
  }

  /** Receives the descriptors of a {@link Read}. */
  @FunctionalInterface
  public interface DescriptorSink {
    /**
     * One descriptor.
     *
     * @param producerOffset where it starts in the producer rank's memory, as a rank offset
     * @param consumerOffset where it lands in the consumer rank's memory, as a rank offset (in the
     *     READ's staging range, for a staged READ)
     * @param length its length in bytes, the same on both sides
     */
    void accept(long producerOffset, long consumerOffset, long length);
  }

  private static Optional<String> problem(
      List<KvLayout> producer,
      List<KvLayout> consumer,
      List<Integer> producerBlocks,
      List<Integer> consumerBlocks,
      int tokens,
      int skipTokens) {
    Optional<String> ranks =
        KvLayout.partitionProblem(producer)
            .map(why -> "producer ranks: " + why)
            .or(() -> KvLayout.partitionProblem(consumer).map(why -> "consumer ranks: " + why))
            .or(
                () ->
                    consumer
                        .get(0)
                        .incompatibilityWith(producer.get(0))
                        .map(why -> "the shapes cannot be translated: " + why));
    if (ranks.isPresent()) {
      return ranks;
    }
    if (tokens <= 0) {
      return Optional.of("tokens must be positive, got " + tokens);
    }
    if (skipTokens < 0) {
      return Optional.of("skip_tokens must be 0 or more, got " + skipTokens);
    }
    KvLayout p = producer.get(0);
    Optional<String> held = LoadChecks.blocksHoldProblem(producerBlocks.size(), p, tokens);
    if (held.isPresent()) {
      return held.map(why -> "producer blocks: " + why);
    }
    KvLayout d = consumer.get(0);
    long needed = ((long) tokens + d.tokensPerBlock() - 1) / d.tokensPerBlock();
    if (consumerBlocks.size() < needed) {
      return Optional.of(
          "consumer blocks: "
              + tokens
              + " tokens need "
              + needed
              + " blocks of "
              + d.tokensPerBlock()
              + " tokens, got "
              + consumerBlocks.size());
    }
    return outsidePool("producer", producerBlocks, p)
        .or(() -> outsidePool("consumer", consumerBlocks, d));
  }

  private static Optional<String> outsidePool(String side, List<Integer> blocks, KvLayout layout) {
    for (Integer id : blocks) {
      if (id == null || id < 0 || id >= layout.blockCount()) {
        return Optional.of(
            side
                + " block id "
                + id
                + " is outside the "
                + side
                + "'s pool of "
                + layout.blockCount()
                + " blocks");
      }
    }
    return Optional.empty();
  }
}
