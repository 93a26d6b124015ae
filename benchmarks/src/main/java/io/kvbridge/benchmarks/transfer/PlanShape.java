package io.kvbridge.benchmarks.transfer;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.layout.KvLayout.MemoryOrder;
import io.kvbridge.layout.KvModel;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;

/**
 * One request the planner benchmarks plan: a prompt of {@code tokens} tokens of Llama-3.1-8B's KV
 * shape ({@link KvModel#LLAMA_3_1_8B}: 32 layers, K and V, 8 KV heads of 128 bf16 elements, 128 KiB
 * per token), {@value #PRODUCER_TOKENS_PER_BLOCK}-token blocks on the producer, read by a consumer
 * of {@code consumerRanks} ranks from a producer of {@code producerRanks} ranks, with {@code
 * consumerTokensPerBlock}-token blocks on the consumer. Each side's pool holds exactly the prompt's
 * blocks, handed out scattered, as a busy engine's pool hands them out: block {@code i} of the
 * prompt is pool block {@code 7i mod n}, so (for pools of more than 8 blocks) no block follows the
 * one before it in memory, and the planner merges nothing across blocks.
 *
 * @param producerRanks the producer's tensor parallelism
 * @param consumerRanks the consumer's tensor parallelism
 * @param consumerTokensPerBlock the consumer's block size in tokens
 * @param tokens the prompt's length, all of it read
 * @param order both sides' memory order
 */
public record PlanShape(
    int producerRanks, int consumerRanks, int consumerTokensPerBlock, int tokens, MemoryOrder order)
    implements PlannedRequest {

  /** The model whose KV shape the requests have. */
  public static final KvModel MODEL = KvModel.LLAMA_3_1_8B;

  /** The model's layers. */
  public static final int LAYERS = MODEL.layers();

  /** The model's KV heads, over all ranks. */
  public static final int KV_HEADS = MODEL.kvHeads();

  /** Elements per head vector. */
  public static final int HEAD_DIM = MODEL.headDim();

  /** Bytes per element (bf16). */
  public static final int DTYPE_BYTES = MODEL.dtypeBytes();

  /** The producer's block size in tokens. */
  public static final int PRODUCER_TOKENS_PER_BLOCK = 16;

  private static final Pattern TP = Pattern.compile("(\\d+)x(\\d+)");

  /** Checks that both sides split the heads evenly and the block sizes are an integer ratio. */
  public PlanShape {
    if (producerRanks < 1 || consumerRanks < 1) {
      throw new IllegalArgumentException(
          "tensor parallelism must be positive, got " + producerRanks + "x" + consumerRanks);
    }
    if (tokens < 1 || consumerTokensPerBlock < 1) {
      throw new IllegalArgumentException(
          "tokens and the consumer's block size must be positive, got "
              + tokens
              + " and "
              + consumerTokensPerBlock);
    }
  }

  /**
   * The shape of benchmark parameters: {@code tp} as {@code <producer ranks>x<consumer ranks>},
   * e.g. {@code 1x8}.
   */
  public static PlanShape of(String tp, int consumerTokensPerBlock, int tokens, MemoryOrder order) {
    Matcher m = TP.matcher(tp);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "tp looks like 2x4 (producer ranks 'x' consumer ranks), got '" + tp + "'");
    }
    return new PlanShape(
        Integer.parseInt(m.group(1)),
        Integer.parseInt(m.group(2)),
        consumerTokensPerBlock,
        tokens,
        order);
  }

  @Override
  public List<KvLayout> producer() {
    return ranks(PRODUCER_TOKENS_PER_BLOCK, producerRanks);
  }

  @Override
  public List<KvLayout> consumer() {
    return ranks(consumerTokensPerBlock, consumerRanks);
  }

  @Override
  public List<Integer> producerBlocks() {
    return scattered(blocksOf(PRODUCER_TOKENS_PER_BLOCK));
  }

  @Override
  public List<Integer> consumerBlocks() {
    return scattered(blocksOf(consumerTokensPerBlock));
  }

  /** The prompt's KV bytes over all ranks of one side: what the read moves. */
  public long bytes() {
    return (long) tokens * LAYERS * 2 * KV_HEADS * HEAD_DIM * DTYPE_BYTES;
  }

  private List<KvLayout> ranks(int tokensPerBlock, int tp) {
    KvLayout model = MODEL.layout(tokensPerBlock, blocksOf(tokensPerBlock), order);
    return IntStream.range(0, tp).mapToObj(r -> model.forRank(r, tp)).toList();
  }

  private int blocksOf(int tokensPerBlock) {
    return (tokens + tokensPerBlock - 1) / tokensPerBlock;
  }

  /**
   * Block {@code i} of the prompt is pool block {@code i * stride mod n}, the stride 7 or the next
   * odd number coprime to n.
   */
  static List<Integer> scattered(int n) {
    int stride = 7;
    while (gcd(stride, n) != 1) {
      stride += 2;
    }
    long s = stride;
    return IntStream.range(0, n).map(i -> (int) (i * s % n)).boxed().toList();
  }

  private static int gcd(int a, int b) {
    return b == 0 ? a : gcd(b, a % b);
  }
}
