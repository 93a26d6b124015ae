package io.kvbridge.sample.demo;

import org.springframework.boot.test.context.SpringBootTest;

/** The all-in-one deployment with its default engines runs a small demo at start-up. */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "kvbridge.sample.prefill.engine-id=demo-test-prefill",
      "kvbridge.sample.decode.engine-id=demo-test-decode",
      "kvbridge.sample.demo.requests=30",
      "kvbridge.sample.demo.concurrency=4",
      "kvbridge.sample.demo.progress-every=10",
      "kvbridge.sample.demo.max-prompt-bytes=400",
      "kvbridge.lease.duration=2s",
      "kvbridge.lease.sweep-interval=100ms",
      "kvbridge.lease.heartbeat-interval=500ms",
      "kvbridge.lease.safety-margin=300ms"
    })
class DemoApplicationTest extends DemoRunChecks {}
