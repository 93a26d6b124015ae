package io.kvbridge.sample.deployment;

import io.kvbridge.layout.KvModel;
import io.kvbridge.sample.engine.ToyModel;
import java.util.List;
import java.util.stream.Stream;

/**
 * Published models' KV shapes the deployment tests run at real size, in the memory shapes engines
 * allocate: one tensor per layer (registered as a region each), and an MLA latent per layer that
 * every rank holds whole.
 */
final class PresetDeployments {

  private PresetDeployments() {}

  /**
   * Llama-3.1-8B (128 KiB of KV per token): P keeps vLLM's FlashAttention tensors, one per layer,
   * NHD, over two ranks; D keeps separate K and V tensors per layer, HND, on one rank.
   */
  static final List<String> LLAMA_PER_LAYER =
      List.of(
          "--kvbridge.sample.engine.model=llama-3.1-8b",
          "--kvbridge.sample.engine.block-count=64",
          "--kvbridge.sample.engine.prefix-cache-blocks=16",
          "--kvbridge.sample.prefill.engine.tp-degree=2",
          "--kvbridge.sample.prefill.engine.memory-placement=per-layer",
          "--kvbridge.sample.prefill.engine.memory-order=block-major",
          "--kvbridge.sample.decode.engine.tp-degree=1",
          "--kvbridge.sample.decode.engine.memory-placement=per-layer-plane",
          "--kvbridge.sample.decode.engine.memory-order=head-major");

  /**
   * DeepSeek-V3's MLA latent (70,272 bytes per token), one tensor per layer on every rank: P of two
   * ranks, D of four, each D rank reading the latent once from one of P's.
   */
  static final List<String> DEEPSEEK_MLA =
      List.of(
          "--kvbridge.sample.engine.model=deepseek-v3",
          "--kvbridge.sample.engine.block-count=64",
          "--kvbridge.sample.engine.prefix-cache-blocks=16",
          "--kvbridge.sample.engine.memory-placement=per-layer-block-first",
          "--kvbridge.sample.prefill.engine.tp-degree=2",
          "--kvbridge.sample.decode.engine.tp-degree=4");

  /**
   * {@link #LLAMA_PER_LAYER}, every request streamed ({@code kvbridge.streaming.min-tokens=1}) and
   * a prefill that costs 5 µs per layer and token: the prefill node answers the router as the lease
   * is granted, and the decode node reads each layer while the next ones compute.
   */
  static final List<String> LLAMA_STREAMED =
      Stream.concat(
              LLAMA_PER_LAYER.stream(),
              Stream.of(
                  "--kvbridge.streaming.min-tokens=1", "--kvbridge.sample.engine.prefill-cost=5us"))
          .toList();

  /** The colocated reference of {@code model}'s KV size. */
  static ToyModel reference(KvModel model) {
    return new ToyModel((int) model.bytesPerToken());
  }
}
