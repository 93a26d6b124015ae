package io.kvbridge.tck.schedule;

import io.kvbridge.layout.KvLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The engines a schedule runs between: how many tensor-parallel ranks split the model's KV heads on
 * P and on D, how many tokens a block holds on each, and the memory order both lay blocks out in.
 * Every engine serves one small model of {@value #KV_HEADS} KV heads; its {@code toString} is part
 * of a schedule's reproduction.
 *
 * @param producerTp P's ranks: 1, 2 or 4
 * @param producerBlockTokens tokens per block on P
 * @param decoderTp D's ranks: 1, 2 or 4
 * @param decoderBlockTokens tokens per block on D: a multiple or a divisor of P's
 * @param order the memory order of both engines' blocks
 */
public record Shape(
    int producerTp,
    int producerBlockTokens,
    int decoderTp,
    int decoderBlockTokens,
    KvLayout.MemoryOrder order) {

  /** The model's KV heads, split evenly over each engine's ranks. */
  static final int KV_HEADS = 4;

  /** P's pool, in blocks of its size. */
  static final int PRODUCER_BLOCKS = 48;

  /** One rank each, blocks of four tokens: engines without tensor parallelism. */
  public static final Shape SINGLE_RANK = new Shape(1, 4, 1, 4, KvLayout.MemoryOrder.HEAD_MAJOR);

  /** Checks that the engines can pair; messages name the component. */
  public Shape {
    Objects.requireNonNull(order, "order");
    for (int tp : new int[] {producerTp, decoderTp}) {
      if (tp < 1 || KV_HEADS % tp != 0) {
        throw new IllegalArgumentException(
            "shape: producerTp and decoderTp must divide the model's " + KV_HEADS + " KV heads");
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
    KvLayout whole = layouts(1, producerBlockTokens, PRODUCER_BLOCKS).get(0);
    return whole.blockBytes() / producerBlockTokens;
  }

  /** P's layouts, by rank. */
  List<KvLayout> producerLayouts() {
    return layouts(producerTp, producerBlockTokens, PRODUCER_BLOCKS);
  }

  /** D's layouts, by rank. */
  List<KvLayout> decoderLayouts() {
    return layouts(decoderTp, decoderBlockTokens, decoderBlocks());
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

  private List<KvLayout> layouts(int tp, int tokensPerBlock, int blocks) {
    KvLayout model =
        new KvLayout(
            "schedule/kv@1", 2, 2, 2, KV_HEADS, 0, KV_HEADS, 4, tokensPerBlock, blocks, order);
    List<KvLayout> ranks = new ArrayList<>(tp);
    for (int r = 0; r < tp; r++) {
      ranks.add(model.forRank(r, tp));
    }
    return List.copyOf(ranks);
  }
}
