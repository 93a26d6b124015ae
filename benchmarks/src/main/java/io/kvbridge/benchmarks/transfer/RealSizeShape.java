package io.kvbridge.benchmarks.transfer;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.layout.KvLayout.MemoryOrder;
import io.kvbridge.layout.KvLayout.Placement;
import io.kvbridge.layout.KvModel;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;

/**
 * One request of a real model's KV at real size, in the memory an engine serving that model keeps
 * it in: {@value #TOKENS_PER_BLOCK}-token blocks on both sides, block-major (NHD), the placement
 * {@link Model} names. Each side's pool holds exactly the prompt's blocks, handed out scattered as
 * {@link PlanShape} hands them out, so no block follows the one before it in memory.
 *
 * @param model the model and its placement
 * @param producerRanks the producer's tensor parallelism
 * @param consumerRanks the consumer's tensor parallelism
 * @param tokens the prompt's length, all of it read; a multiple of the block size
 */
public record RealSizeShape(Model model, int producerRanks, int consumerRanks, int tokens)
    implements PlannedRequest {

  /** Both sides' block size in tokens (vLLM's default). */
  public static final int TOKENS_PER_BLOCK = 16;

  /** Both sides' memory order. */
  public static final MemoryOrder ORDER = MemoryOrder.BLOCK_MAJOR;

  private static final Pattern TP = Pattern.compile("(\\d+)x(\\d+)");

  /** A model and the placement of its KV an engine serving it uses. */
  public enum Model {
    /** Llama-3.1-8B in vLLM's FlashAttention KV tensor per layer, {@code [2, blocks, ...]}. */
    LLAMA_3_1_8B(KvModel.LLAMA_3_1_8B, Placement.PER_LAYER),
    /** DeepSeek-V3's MLA latent per layer, block first (FlashInfer/MLA), on every rank. */
    DEEPSEEK_V3(KvModel.DEEPSEEK_V3, Placement.PER_LAYER_BLOCK_FIRST);

    private final KvModel kv;
    private final Placement placement;

    Model(KvModel kv, Placement placement) {
      this.kv = kv;
      this.placement = placement;
    }

    /** The model's KV shape. */
    public KvModel kv() {
      return kv;
    }

    /** Where its KV lies in a rank's memory. */
    public Placement placement() {
      return placement;
    }
  }

  /** Checks the ranks and that the prompt fills whole blocks. */
  public RealSizeShape {
    if (producerRanks < 1 || consumerRanks < 1) {
      throw new IllegalArgumentException(
          "tensor parallelism must be positive, got " + producerRanks + "x" + consumerRanks);
    }
    if (tokens < TOKENS_PER_BLOCK || tokens % TOKENS_PER_BLOCK != 0) {
      throw new IllegalArgumentException(
          "tokens must be a positive multiple of " + TOKENS_PER_BLOCK + ", got " + tokens);
    }
  }

  /** The shape of benchmark parameters: {@code tp} as {@code <producer ranks>x<consumer ranks>}. */
  public static RealSizeShape of(Model model, String tp, int tokens) {
    Matcher m = TP.matcher(tp);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "tp looks like 2x1 (producer ranks 'x' consumer ranks), got '" + tp + "'");
    }
    return new RealSizeShape(
        model, Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), tokens);
  }

  /** {@code <producer ranks>x<consumer ranks>}. */
  public String tp() {
    return producerRanks + "x" + consumerRanks;
  }

  /** The prompt's blocks on either side. */
  public int blocks() {
    return tokens / TOKENS_PER_BLOCK;
  }

  @Override
  public List<KvLayout> producer() {
    return ranks(producerRanks);
  }

  @Override
  public List<KvLayout> consumer() {
    return ranks(consumerRanks);
  }

  @Override
  public List<Integer> producerBlocks() {
    return PlanShape.scattered(blocks());
  }

  @Override
  public List<Integer> consumerBlocks() {
    return PlanShape.scattered(blocks());
  }

  private List<KvLayout> ranks(int tp) {
    KvLayout whole =
        model.kv().layout(TOKENS_PER_BLOCK, blocks(), ORDER).withMemory(ORDER, model.placement());
    return IntStream.range(0, tp).mapToObj(r -> whole.forRank(r, tp)).toList();
  }
}
