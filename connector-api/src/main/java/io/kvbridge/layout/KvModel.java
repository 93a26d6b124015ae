package io.kvbridge.layout;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The KV shape of a published model: what every token leaves in the cache, per layer. A preset
 * gives an engine the {@link KvLayout} of a real model without retyping its config; the figures are
 * the models' own {@code config.json} on Hugging Face (the repository named by {@link #source()}):
 * layers ({@code num_hidden_layers}), KV heads ({@code num_key_value_heads}), head dimension
 * ({@code hidden_size / num_attention_heads}, or {@code head_dim}) and the element type ({@code
 * torch_dtype}). An MLA model keeps one latent per token and layer instead of K and V per head:
 * {@code kv_lora_rank + qk_rope_head_dim} elements, as one plane of one "head".
 *
 * @param name the preset's name, as configuration spells it (e.g. {@code llama-3.1-8b})
 * @param source the Hugging Face repository whose {@code config.json} the figures come from
 * @param layers layers that keep KV
 * @param planes 2 (K and V) or 1 (an MLA latent)
 * @param kvHeads KV heads (1 for MLA's latent)
 * @param headDim elements per head vector (the latent's width for MLA)
 * @param dtypeBytes bytes per element of the KV cache
 */
public record KvModel(
    String name, String source, int layers, int planes, int kvHeads, int headDim, int dtypeBytes) {

  /** {@code meta-llama/Llama-3.1-8B}: 32 layers, 8 KV heads of 128, bf16; 128 KiB per token. */
  public static final KvModel LLAMA_3_1_8B =
      new KvModel("llama-3.1-8b", "meta-llama/Llama-3.1-8B", 32, 2, 8, 128, 2);

  /** {@code meta-llama/Llama-3.1-70B}: 80 layers, 8 KV heads of 128, bf16; 320 KiB per token. */
  public static final KvModel LLAMA_3_1_70B =
      new KvModel("llama-3.1-70b", "meta-llama/Llama-3.1-70B", 80, 2, 8, 128, 2);

  /** {@code Qwen/Qwen2.5-7B}: 28 layers, 4 KV heads of 128 (3584 / 28), bf16; 56 KiB per token. */
  public static final KvModel QWEN_2_5_7B =
      new KvModel("qwen2.5-7b", "Qwen/Qwen2.5-7B", 28, 2, 4, 128, 2);

  /** {@code mistralai/Mistral-7B-v0.1}: 32 layers, 8 KV heads of 128, bf16; 128 KiB per token. */
  public static final KvModel MISTRAL_7B =
      new KvModel("mistral-7b", "mistralai/Mistral-7B-v0.1", 32, 2, 8, 128, 2);

  /**
   * {@code deepseek-ai/DeepSeek-V3}: 61 MLA layers, a latent of 512 ({@code kv_lora_rank}) + 64
   * ({@code qk_rope_head_dim}) elements, bf16; 70,272 bytes per token. Every tensor-parallel rank
   * holds the whole latent.
   */
  public static final KvModel DEEPSEEK_V3 =
      new KvModel("deepseek-v3", "deepseek-ai/DeepSeek-V3", 61, 1, 1, 576, 2);

  /** Every preset, in the order above. */
  public static final List<KvModel> PRESETS =
      List.of(LLAMA_3_1_8B, LLAMA_3_1_70B, QWEN_2_5_7B, MISTRAL_7B, DEEPSEEK_V3);

  /** Checks every value; messages name the field. */
  public KvModel {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(source, "source");
    requirePositive("layers", layers);
    if (planes != 1 && planes != 2) {
      throw new IllegalArgumentException(
          "KV model " + name + ": planes must be 1 or 2, got " + planes);
    }
    requirePositive("kv_heads", kvHeads);
    requirePositive("head_dim", headDim);
    requirePositive("dtype_bytes", dtypeBytes);
  }

  private static void requirePositive(String field, int value) {
    if (value <= 0) {
      throw new IllegalArgumentException("KV model: " + field + " must be positive, got " + value);
    }
  }

  /** The preset named {@code name} (case ignored), if there is one. */
  public static Optional<KvModel> preset(String name) {
    return PRESETS.stream().filter(m -> m.name.equalsIgnoreCase(name.trim())).findFirst();
  }

  /** The presets' names, comma-separated, for messages that list what is known. */
  public static String presetNames() {
    return PRESETS.stream().map(KvModel::name).collect(Collectors.joining(", "));
  }

  /** Whether the model keeps one latent per token and layer (MLA) rather than K and V per head. */
  public boolean latent() {
    return planes == 1;
  }

  /** Bytes of KV one token leaves in the cache, over every layer and head. */
  public long bytesPerToken() {
    return (long) layers * planes * kvHeads * headDim * dtypeBytes;
  }

  /**
   * The whole model's layout (every head) for blocks of {@code tokensPerBlock} tokens, {@code
   * blockCount} blocks and memory order {@code order}; a rank holds {@link KvLayout#forRank its
   * share}. The layout's model is {@link #name()}, so engines of different models never pair.
   */
  public KvLayout layout(int tokensPerBlock, int blockCount, KvLayout.MemoryOrder order) {
    return new KvLayout(
        name,
        dtypeBytes,
        layers,
        planes,
        kvHeads,
        0,
        kvHeads,
        headDim,
        tokensPerBlock,
        blockCount,
        order);
  }

  @Override
  public String toString() {
    return String.format(
        Locale.ROOT,
        "%s (%s: %d layers, %s, %d B per token)",
        name,
        source,
        layers,
        latent() ? "latent of " + headDim : kvHeads + " KV heads of " + headDim,
        bytesPerToken());
  }
}
