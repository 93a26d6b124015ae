package io.kvbridge.sample.demo;

import io.kvbridge.layout.KvModel;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * The demo with Llama-3.1-8B's KV at its real size (128 KiB per token) kept as engines keep it: the
 * prefill engine's two ranks in vLLM's FlashAttention tensors, one per layer, NHD; the decode
 * engine's one rank in separate K and V tensors per layer, HND. Each tensor is a region of its own.
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "kvbridge.sample.prefill.engine-id=demo-llama-prefill",
      "kvbridge.sample.decode.engine-id=demo-llama-decode",
      "kvbridge.sample.engine.model=llama-3.1-8b",
      "kvbridge.sample.engine.block-count=256",
      "kvbridge.sample.engine.prefix-cache-blocks=64",
      "kvbridge.sample.prefill.engine.tp-degree=2",
      "kvbridge.sample.prefill.engine.memory-placement=per-layer",
      "kvbridge.sample.prefill.engine.memory-order=block-major",
      "kvbridge.sample.decode.engine.memory-placement=per-layer-plane",
      "kvbridge.sample.demo.requests=30",
      "kvbridge.sample.demo.concurrency=4",
      "kvbridge.sample.demo.progress-every=10",
      "kvbridge.sample.demo.max-prompt-bytes=400",
      "kvbridge.lease.duration=2s",
      "kvbridge.lease.sweep-interval=100ms",
      "kvbridge.lease.heartbeat-interval=500ms",
      "kvbridge.lease.safety-margin=300ms"
    })
class DemoLlamaPerLayerTest extends DemoRunChecks {

  @Override
  long bytesPerToken() {
    return KvModel.LLAMA_3_1_8B.bytesPerToken();
  }
}
