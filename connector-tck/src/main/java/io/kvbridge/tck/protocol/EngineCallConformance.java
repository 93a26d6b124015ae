package io.kvbridge.tck.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.ConnectorStatus;
import io.kvbridge.spi.FinishDecision;
import io.kvbridge.spi.FinishedRequest;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.LoadSpec;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.StepMetadata;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.tck.Prompts;
import io.kvbridge.transfer.KvMemory;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Calls an engine may not make (a role it does not have, a closed connector, a rank it lacks, a
 * load beyond the limit): each is refused and leaves the connector usable; and the status shows
 * each engine only the parts of its role.
 */
public abstract class EngineCallConformance extends PullProtocolFixture {

  /** These tests, run against {@code connector}. */
  protected EngineCallConformance(ConnectorUnderTest connector) {
    super(connector);
  }

  @Test
  void loadsBeyondTheLimitPerProducerAreRefusedAndCounted() {
    maxLoadsPerProducer = 1;
    consumer = node("decode-limited", Role.CONSUMER, CONSUMER_LAYOUT);
    TransferParams first = prefill("p-1", List.of(1));
    TransferParams second = prefill("p-2", List.of(2));
    assertThat(
            consumer
                .connector
                .scheduler()
                .matchRemote("d-1", Prompts.of("p-1", first.tokens()), 0, first))
        .isNotInstanceOf(LoadMatch.Unavailable.class);

    LoadMatch match =
        consumer
            .connector
            .scheduler()
            .matchRemote("d-2", Prompts.of("p-2", second.tokens()), 0, second);

    assertThat(match)
        .isInstanceOfSatisfying(
            LoadMatch.Unavailable.class,
            unavailable -> assertThat(unavailable.reason()).contains("max-loads-per-producer"));
    assertThat(consumer.connector.status().rejected())
        .containsEntry(RejectedInput.OVER_PRODUCER_LIMIT, 1L);
  }

  @Test
  void aProducerRefusesTheConsumersCalls() {
    TransferParams params = prefill("p-1", List.of(1));
    var scheduler = producer.connector.scheduler();
    TokenIds prompt = Prompts.of("p-1", params.tokens());
    StepMetadata loads = new StepMetadata(List.of(new LoadSpec("d-1", params, List.of(1))));

    assertThatThrownBy(() -> scheduler.matchRemote("d-1", prompt, 0, params))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("does not load remote KV");
    assertThatThrownBy(() -> scheduler.afterAllocate("d-1", List.of(1)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("does not load remote KV");
    assertThatThrownBy(() -> producer.connector.worker().startLoad(loads))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("does not load remote KV");
    assertThat(scheduler.cancelLoad("d-1", "client went away")).isFalse();
    assertThat(scheduler.buildStepMetadata().loadsToStart()).isEmpty();
  }

  @Test
  void aConsumerFreesEveryFinishedRequestAtOnce() {
    FinishDecision decision =
        consumer
            .connector
            .scheduler()
            .requestFinished(
                new FinishedRequest("d-1", List.of(1, 2), Prompts.of("d-1", 8), 8, false, true));

    assertThat(decision.delayFree()).isFalse();
    assertThat(decision.params()).isEmpty();
  }

  @Test
  void cancellingALoadTheConsumerDoesNotKnowIsRefusedAndLeavesItUsable() throws Exception {
    assertThat(consumer.connector.scheduler().cancelLoad("ghost", "client went away")).isFalse();

    // Another thread can still reach the consumer's state.
    assertThat(
            java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> consumer.connector.status().consumer())
                .get(underTest.patience().toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS))
        .isPresent();
  }

  @Test
  void aClosedConnectorRefusesEveryEngineCall() {
    TransferParams params = prefill("p-1", List.of(1));
    KvConnector closed = consumer.connector;
    TokenIds prompt = Prompts.of("p-1", params.tokens());
    StepMetadata loads = new StepMetadata(List.of(new LoadSpec("d-1", params, List.of(1))));
    closed.close();

    for (org.assertj.core.api.ThrowableAssert.ThrowingCallable call :
        List.<org.assertj.core.api.ThrowableAssert.ThrowingCallable>of(
            () -> closed.scheduler().matchRemote("d-1", prompt, 0, params),
            () -> closed.scheduler().afterAllocate("d-1", List.of(1)),
            () -> closed.worker().startLoad(loads),
            () -> closed.worker().allocateKvCache(CONSUMER_LAYOUT),
            () -> closed.worker().registerKvCache(consumer.memory, CONSUMER_LAYOUT))) {
      assertThatThrownBy(call)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("is closed");
    }
    assertThat(closed.scheduler().cancelLoad("d-1", "client went away")).isFalse();
  }

  @Test
  void aRankRegistersItsKvCacheOnlyOnce() {
    assertThatThrownBy(
            () -> producer.connector.worker().registerKvCache(producer.memory, PRODUCER_LAYOUT))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("rank 0 already has a KV cache registered");
  }

  /**
   * A layout of per-layer tensors is registered as one region per tensor: the one-region calls
   * refuse it, and so does a list of the wrong number of regions, naming both counts; the rank is
   * left unregistered, and registering the right regions then succeeds.
   */
  @Test
  void perLayerTensorsAreRegisteredAsOneRegionEachAndAWrongCountIsRefused() {
    // 4 layers, K and V, 2 heads of 8 two-byte elements, 4-token blocks, 16 of them.
    KvLayout perLayer =
        new KvLayout(
                "conformance/per-layer",
                2,
                4,
                2,
                2,
                0,
                2,
                8,
                4,
                16,
                KvLayout.MemoryOrder.BLOCK_MAJOR)
            .withMemory(KvLayout.MemoryOrder.BLOCK_MAJOR, KvLayout.Placement.PER_LAYER);
    KvConnector engine =
        newConnector(
            ConnectorSettings.builder(
                    underTest.provider().type(), "per-layer-" + UUID.randomUUID().toString())
                .role(Role.PRODUCER)
                .handshakeAddress(underTest.handshakeAddress())
                .properties(underTest.connectorProperties())
                .clock(clock)
                // Driven step by step on a manual clock: no progress thread between steps
                // (ProgressConformance runs one on the real clock).
                .progressInterval(Duration.ZERO)
                .build());
    List<KvMemory> regions = engine.worker().allocateKvRegions(perLayer);
    try {
      assertThat(regions)
          .hasSize(perLayer.layers())
          .allSatisfy(
              r -> assertThat(r.sizeBytes()).isGreaterThanOrEqualTo(perLayer.regionBytes()));
      assertThatThrownBy(() -> engine.worker().allocateKvCache(perLayer))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("regions: allocate and register them as a list");
      assertThatThrownBy(() -> engine.worker().registerKvCache(regions.get(0), perLayer))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("regions: allocate and register them as a list");
      assertThatThrownBy(() -> engine.worker().registerKvCache(regions.subList(0, 1), perLayer))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage(
              "a per_layer layout of "
                  + perLayer.layers()
                  + " layers is "
                  + perLayer.layers()
                  + " region(s), got 1");

      engine.worker().registerKvCache(regions, perLayer);

      assertThatThrownBy(() -> engine.worker().registerKvCache(regions, perLayer))
          .isInstanceOf(IllegalStateException.class)
          .hasMessage("rank 0 already has a KV cache registered");
    } finally {
      engine.close();
      regions.forEach(KvMemory::close);
    }
  }

  @Test
  void aRankTheEngineDoesNotHaveIsRefused() {
    assertThatThrownBy(() -> producer.connector.worker(1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("has ranks 0 to 0");
    assertThatThrownBy(() -> producer.connector.worker(-1))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void eachEngineShowsOnlyThePartsOfItsRole() {
    ConnectorStatus p = producer.connector.status();
    ConnectorStatus c = consumer.connector.status();

    assertThat(p.role()).isEqualTo(Role.PRODUCER);
    assertThat(p.incarnation()).isEqualTo(producer.connector.settings().incarnation());
    assertThat(p.producer()).isPresent();
    assertThat(p.consumer()).isEmpty();
    assertThat(c.role()).isEqualTo(Role.CONSUMER);
    assertThat(c.producer()).isEmpty();
    assertThat(c.consumer()).isPresent();
  }
}
