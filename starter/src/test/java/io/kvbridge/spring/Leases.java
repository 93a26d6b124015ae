package io.kvbridge.spring;

import io.kvbridge.spi.FinishDecision;
import io.kvbridge.spi.FinishedRequest;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.KvLayout;
import java.util.List;

/** Test steps that make a producer hold leases. */
final class Leases {

  /** 8 blocks of 64 bytes, 4 tokens each. */
  static final KvLayout LAYOUT = new KvLayout(8, 64, 4, "test-model/fp16");

  private Leases() {}

  /** Registers a KV cache so the connector answers handshakes and may grant leases. */
  static KvConnector registered(KvConnector connector) {
    connector.worker().registerKvCache(connector.worker().allocateKvCache(LAYOUT), LAYOUT);
    return connector;
  }

  /** Finishes {@code requestId} with two full blocks that a consumer will read: grants a lease. */
  static FinishDecision grant(KvConnector connector, String requestId) {
    FinishDecision decision =
        connector
            .scheduler()
            .requestFinished(new FinishedRequest(requestId, List.of(0, 1), 8, false, true));
    if (!decision.delayFree()) {
      throw new IllegalStateException("no lease was granted for " + requestId);
    }
    return decision;
  }
}
