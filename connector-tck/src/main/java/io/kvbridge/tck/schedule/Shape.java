package io.kvbridge.tck.schedule;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.layout.KvModel;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The engines a schedule runs between: the model whose KV they hold, how many tensor-parallel ranks
 * hold its KV heads on P and on D, how many tokens a block holds on each, the memory order both lay
 * slabs out in and where each engine places them (one region, or one per layer or per layer and
 * plane). Most schedules serve one small model of {@value #KV_HEADS} KV heads; a published model's
 * preset runs at its real size. Its {@code toString} is part of a schedule's reproduction.
 *
 * @param producerTp P's ranks: a divisor of the model's KV heads, or a multiple (replicated KV)
 * @param producerBlockTokens tokens per block on P
 * @param decoderTp D's ranks, likewise
 * @param decoderBlockTokens tokens per block on D: a multiple or a divisor of P's
 * @param order the memory order of both engines' slabs
 * @param producerPlacement where P's slabs lie
 * @param decoderPlacement where D's slabs lie
 * @param model the model whose KV the engines hold
 */
public record Shape(
    int producerTp,
    int producerBlockTokens,
    int decoderTp,
    int decoderBlockTokens,
    KvLayout.MemoryOrder order,
    KvLayout.Placement producerPlacement,
    KvLayout.Placement decoderPlacement,
    KvModel model) {

  /** The small model's KV heads. */
  static final int KV_HEADS = 4;

  /** The small model most schedules serve: 2 layers, K and V, 4 KV heads of 4 two-byte elements. */
  public static final KvModel SMALL_MODEL =
      new KvModel("schedule/kv@1", "the kit's own", 2, 2, KV_HEADS, 4, 2);

  /** P's pool, in blocks of its size. */
  static final int PRODUCER_BLOCKS = 48;

  /** One rank each, blocks of four tokens: engines without tensor parallelism. */
  public static final Shape SINGLE_RANK = new Shape(1, 4, 1, 4, KvLayout.MemoryOrder.HEAD_MAJOR);

  /** Engines of the small model, in one cross-layer region per rank. */
  public Shape(
      int producerTp,
      int producerBlockTokens,
      int decoderTp,
      int decoderBlockTokens,
      KvLayout.MemoryOrder order) {
    this(
        producerTp,
        producerBlockTokens,
        decoderTp,
        decoderBlockTokens,
        order,
        KvLayout.Placement.CROSS_LAYER,
        KvLayout.Placement.CROSS_LAYER,
        SMALL_MODEL);
  }

  /** Checks that the engines can pair; messages name the component. */
  public Shape {
    Objects.requireNonNull(order, "order");
    Objects.requireNonNull(producerPlacement, "producerPlacement");
    Objects.requireNonNull(decoderPlacement, "decoderPlacement");
    Objects.requireNonNull(model, "model");
    int heads = model.kvHeads();
    for (int tp : new int[] {producerTp, decoderTp}) {
      if (tp < 1 || (heads % tp != 0 && tp % heads != 0)) {
        throw new IllegalArgumentException(
            "shape: producerTp and decoderTp must divide the model's "
                + heads
                + " KV heads or be a multiple of them");
      }
    }
    int big = Math.max(producerBlockTokens, decoderBlockTokens);
    int small = Math.min(producerBlockTokens, decoderBlockTokens);
    if (small < 1 || big % small != 0) {
      throw new IllegalArgumentException(
          "shape: producerBlockTokens and decoderBlockTokens must be positive, one a multiple of"
              + " the other; got "
              + producerBlockTokens
              + " and "
              + decoderBlockTokens);
    }
  }

  /**
   * D's pool, in blocks of its size: at least P's, and as many tokens, so D has room for whatever P
   * can lease at once.
   */
  int decoderBlocks() {
    return PRODUCER_BLOCKS * Math.max(1, producerBlockTokens / decoderBlockTokens);
  }

  /** The bytes of one token's KV over all heads, layers and planes. */
  int tokenBytes() {
    return Math.toIntExact(model.bytesPerToken());
  }

  /** P's layouts, by rank. */
  List<KvLayout> producerLayouts() {
    return layouts(producerTp, producerBlockTokens, PRODUCER_BLOCKS, producerPlacement);
  }

  /** D's layouts, by rank. */
  List<KvLayout> decoderLayouts() {
    return layouts(decoderTp, decoderBlockTokens, decoderBlocks(), decoderPlacement);
  }

  /**
   * The first token a load writes when D holds the first {@code localTokens} of a lease's {@code
   * tokens} already: the local prefix rounded down to whole blocks of both engines; {@code tokens}
   * when D holds them all.
   */
  int firstTokenRead(int tokens, int localTokens) {
    if (localTokens >= tokens) {
      return tokens;
    }
    int unit = Math.max(producerBlockTokens, decoderBlockTokens);
    return localTokens / unit * unit;
  }

  private List<KvLayout> layouts(
      int tp, int tokensPerBlock, int blocks, KvLayout.Placement placement) {
    KvLayout whole = model.layout(tokensPerBlock, blocks, order).withMemory(order, placement);
    List<KvLayout> ranks = new ArrayList<>(tp);
    for (int r = 0; r < tp; r++) {
      ranks.add(whole.forRank(r, tp));
    }
    return List.copyOf(ranks);
  }
}
