package io.kvbridge.spring;

import static org.awaitility.Awaitility.await;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.spi.FinishDecision;
import io.kvbridge.spi.FinishedRequest;
import io.kvbridge.spi.FinishedTransfers;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** Test steps that make producers hold leases and consumers read them, as an engine would. */
public final class Leases {

  /** 8 blocks of 64 bytes, 4 tokens each. */
  public static final KvLayout LAYOUT = KvLayout.opaque("test-model/fp16", 4, 16, 8);

  /** The blocks a granted lease holds: two, of 64 bytes each. */
  public static final List<Integer> BLOCKS = List.of(0, 1);

  /** The prompt of every request: eight tokens, filling the two blocks. */
  public static final TokenIds PROMPT = TokenIds.of(11, 12, 13, 14, 15, 16, 17, 18);

  private Leases() {}

  /** Registers a KV cache so the connector answers handshakes and may grant leases. */
  public static KvConnector registered(KvConnector connector) {
    connector.worker().registerKvCache(connector.worker().allocateKvCache(LAYOUT), LAYOUT);
    return connector;
  }

  /** Finishes {@code requestId} with two blocks that a consumer will read: grants a lease. */
  public static TransferParams grant(KvConnector producer, String requestId) {
    FinishDecision decision =
        producer
            .scheduler()
            .requestFinished(
                new FinishedRequest(requestId, BLOCKS, PROMPT, PROMPT.size(), false, true));
    return decision
        .params()
        .orElseThrow(() -> new IllegalStateException("no lease was granted for " + requestId));
  }

  /**
   * Accepts {@code params} on the consumer, as an engine's scheduler does, until the producer
   * confirmed the lease: from then on the consumer means to read them and heartbeats renew them.
   */
  public static void accept(
      KvConnector producer, KvConnector consumer, String requestId, TransferParams params) {
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(2))
        .until(
            () -> {
              producer.worker().sweep();
              consumer.worker().sweep();
              LoadMatch match = consumer.scheduler().matchRemote(requestId, PROMPT, 0, params);
              if (match instanceof LoadMatch.Unavailable unavailable) {
                throw new AssertionError("load refused: " + unavailable.reason());
              }
              return match instanceof LoadMatch.Ready;
            });
  }

  /**
   * Grants a lease for {@code requestId} on the producer, and loads it on the consumer; returns
   * once the consumer received the blocks and the producer's lease ended.
   */
  public static void read(KvConnector producer, KvConnector consumer, String requestId) {
    TransferParams params = grant(producer, requestId);
    accept(producer, consumer, requestId, params);
    consumer.scheduler().afterAllocate(requestId, List.of(4, 5));
    consumer.worker().startLoad(consumer.scheduler().buildStepMetadata());
    Set<String> received = new HashSet<>();
    Set<String> sent = new HashSet<>();
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(2))
        .until(
            () -> {
              FinishedTransfers consumed = consumer.worker().getFinished(Set.of());
              if (!consumed.failedLoads().isEmpty()) {
                throw new AssertionError("load failed: " + consumed.failedLoads());
              }
              received.addAll(consumed.doneReceiving());
              sent.addAll(producer.worker().getFinished(Set.of()).doneSending());
              return received.contains(requestId) && sent.contains(requestId);
            });
  }
}
