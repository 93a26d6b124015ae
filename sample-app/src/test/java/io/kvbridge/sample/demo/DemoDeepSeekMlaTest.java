package io.kvbridge.sample.demo;

import io.kvbridge.layout.KvModel;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * The demo with DeepSeek-V3's MLA latent at its real size (70,272 bytes per token), one tensor per
 * layer on every rank: a prefill engine of two ranks, a decode engine of four, each of whose ranks
 * reads the latent once from one of the prefill engine's.
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "kvbridge.sample.prefill.engine-id=demo-mla-prefill",
      "kvbridge.sample.decode.engine-id=demo-mla-decode",
      "kvbridge.sample.engine.model=deepseek-v3",
      "kvbridge.sample.engine.block-count=256",
      "kvbridge.sample.engine.prefix-cache-blocks=64",
      "kvbridge.sample.engine.memory-placement=per-layer-block-first",
      "kvbridge.sample.prefill.engine.tp-degree=2",
      "kvbridge.sample.decode.engine.tp-degree=4",
      "kvbridge.sample.demo.requests=30",
      "kvbridge.sample.demo.concurrency=4",
      "kvbridge.sample.demo.progress-every=10",
      "kvbridge.sample.demo.max-prompt-bytes=400",
      "kvbridge.lease.duration=2s",
      "kvbridge.lease.sweep-interval=100ms",
      "kvbridge.lease.heartbeat-interval=500ms",
      "kvbridge.lease.safety-margin=300ms"
    })
class DemoDeepSeekMlaTest extends DemoRunChecks {

  /** Each of the decode engine's four ranks reads a token's whole latent, once. */
  @Override
  long bytesPerToken() {
    return 4 * KvModel.DEEPSEEK_V3.bytesPerToken();
  }
}
