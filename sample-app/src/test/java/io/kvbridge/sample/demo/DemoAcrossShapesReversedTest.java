package io.kvbridge.sample.demo;

import org.springframework.boot.test.context.SpringBootTest;

/**
 * The demo with a prefill engine of one rank and 32-token blocks and a decode engine of two ranks
 * and 16-token blocks.
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "kvbridge.sample.prefill.engine-id=reversed-shapes-test-prefill",
      "kvbridge.sample.decode.engine-id=reversed-shapes-test-decode",
      "kvbridge.sample.prefill.engine.tp-degree=1",
      "kvbridge.sample.prefill.engine.tokens-per-block=32",
      "kvbridge.sample.decode.engine.tp-degree=2",
      "kvbridge.sample.decode.engine.tokens-per-block=16",
      "kvbridge.sample.demo.requests=30",
      "kvbridge.sample.demo.concurrency=4",
      "kvbridge.sample.demo.progress-every=10",
      "kvbridge.sample.demo.max-prompt-bytes=400",
      "kvbridge.lease.duration=2s",
      "kvbridge.lease.sweep-interval=100ms",
      "kvbridge.lease.heartbeat-interval=500ms",
      "kvbridge.lease.safety-margin=300ms"
    })
class DemoAcrossShapesReversedTest extends DemoRunChecks {}
