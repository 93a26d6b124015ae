package io.kvbridge.tck.shapes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.lease.EndReason;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.spi.FinishDecision;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.StartedRequest;
import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.tck.Messages;
import io.kvbridge.tck.Prompts;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.ForwardingTransport;
import io.kvbridge.transfer.PreparedList;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.Transport;
import io.kvbridge.wire.LeaseRef;
import io.kvbridge.wire.ProtocolMessage;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Streamed leases: P grants the lease when a request's prefill starts and announces each layer as
 * every rank saved it; D reads each layer as soon as it is announced, checks it against the layer's
 * checksums, and completes the lease after the last one. Every byte lands where the consumer's
 * layout puts it, whatever the memory shapes on either side; nothing of a layer is read before
 * every rank of P saved it; announcements that repeat, skip or overrun layers, or carry another
 * token, are refused and counted; a completion before the last layer is refused; a lease that ends
 * while P still computes is never reported to P's engine before it finished the request.
 */
public abstract class StreamedLayerConformance extends ShapeTranslationFixture {

  private static final int STREAMED_LAYERS = 3;
  private static final int TOKENS = 29;

  /** These tests, run against {@code connector}. */
  protected StreamedLayerConformance(ConnectorUnderTest connector) {
    super(connector);
  }

  /**
   * Each layer reaches the consumer once every producer rank saved it, and not before; the last one
   * completes the load byte for byte, and P's engine learns the lease ended only once it finished
   * the request.
   */
  @ParameterizedTest(name = "P {0}/{1} TP{2} x {3} -> D {4}/{5} TP{6} x {7}")
  @MethodSource("io.kvbridge.tck.shapes.TranslatedShapeConformance#memoryShapes")
  void eachLayerIsReadOnceEveryRankSavedItAndTheLastCompletesTheLoad(
      KvLayout.Placement producerPlacement,
      KvLayout.MemoryOrder producerOrder,
      int producerTp,
      int producerBlock,
      KvLayout.Placement consumerPlacement,
      KvLayout.MemoryOrder consumerOrder,
      int consumerTp,
      int consumerBlock) {
    Engine producer =
        start(
            "p",
            Role.PRODUCER,
            model(producerBlock, 32, producerOrder, STREAMED_LAYERS)
                .withMemory(producerOrder, producerPlacement),
            producerTp);
    Engine consumer =
        start(
            "d",
            Role.CONSUMER,
            model(consumerBlock, 64, consumerOrder, STREAMED_LAYERS)
                .withMemory(consumerOrder, consumerPlacement),
            consumerTp);

    Transfer t = startStreamed(producer, consumer, "stream-1", TOKENS);
    consumer.assertUntouchedLayers(t, 0, STREAMED_LAYERS);

    for (int layer = 0; layer < STREAMED_LAYERS; layer++) {
      if (producerTp > 1) {
        // One rank's layer alone is not announced: the others may not have written it yet.
        producer.computeLayer(t.requestId(), 0, layer);
        settle(producer, consumer);
        consumer.assertUntouchedLayers(t, layer, STREAMED_LAYERS);
        for (int rank = 1; rank < producerTp; rank++) {
          producer.computeLayer(t.requestId(), rank, layer);
        }
      } else {
        producer.computeLayer(t.requestId(), layer);
      }
      if (layer + 1 < STREAMED_LAYERS) {
        int through = layer + 1;
        stepUntil(producer, consumer, () -> consumer.assertHoldsLayers(t, 0, through));
        settle(producer, consumer);
        consumer.assertUntouchedLayers(t, through, STREAMED_LAYERS);
        assertThat(consumer.received).doesNotContain(t.requestId());
      }
    }
    awaitEnded(producer, consumer, t.requestId());

    assertThat(consumer.failed).isEmpty();
    assertThat(consumer.received).contains(t.requestId());
    consumer.assertHolds(t, 0, TOKENS);
    consumer.assertUntouchedOutside(t);
    assertThat(producer.connector.status().producer().orElseThrow().leasesEnded())
        .containsEntry(EndReason.READ, 1L);
    // The lease ended READ while P's engine still computed: it is not told to free the blocks it
    // computes into, and once it finished the request it frees them at once, never told again.
    producer.step();
    assertThat(producer.sent).as("reported before the engine finished the request").isEmpty();
    FinishDecision finished = producer.finishPrefill(t.requestId(), TOKENS, false);
    assertThat(finished.delayFree()).isFalse();
    producer.step();
    assertThat(producer.sent).isEmpty();
  }

  /**
   * Announcements that name layers announced already, skip layers, go beyond the model's layers or
   * carry another lease token are refused, counted, and change nothing: the load goes on and reads
   * exactly the layers P computed.
   */
  @Test
  void announcementsThatRepeatSkipOrOverrunLayersOrCarryAnotherTokenAreRefused() {
    List<Transport> producerAgents = new CopyOnWriteArrayList<>();
    Engine producer = start("p", Role.PRODUCER, streamedModel(), 1, capture(producerAgents));
    List<Transport> consumerAgents = new CopyOnWriteArrayList<>();
    Engine consumer = start("d", Role.CONSUMER, streamedModel(), 1, capture(consumerAgents));
    Transfer t = streamedThroughLayerZero(producer, consumer, "stream-2");
    String token = producer.leaseToken(t.requestId());
    LeaseRef lease = new LeaseRef(t.requestId(), token);
    String to = consumerAgents.get(0).agentName();
    Transport from = producerAgents.get(0);

    from.notify(to, encode(new ProtocolMessage.Layers(lease, 0, 1, zeros(t, 1))));
    awaitRejected(producer, consumer, RejectedInput.LAYERS_DUPLICATE);
    from.notify(to, encode(new ProtocolMessage.Layers(lease, 2, 3, zeros(t, 1))));
    awaitRejected(producer, consumer, RejectedInput.LAYERS_OUT_OF_ORDER);
    from.notify(
        to,
        encode(
            new ProtocolMessage.Layers(lease, 1, STREAMED_LAYERS + 1, zeros(t, STREAMED_LAYERS))));
    awaitRejected(producer, consumer, RejectedInput.LAYERS_BEYOND_MODEL);
    String otherToken = token.startsWith("0") ? "1" + token.substring(1) : "0" + token.substring(1);
    from.notify(
        to,
        encode(
            new ProtocolMessage.Layers(
                new LeaseRef(t.requestId(), otherToken), 1, 2, zeros(t, 1))));
    awaitRejected(producer, consumer, RejectedInput.WRONG_TOKEN);

    settle(producer, consumer);
    consumer.assertUntouchedLayers(t, 1, STREAMED_LAYERS);
    computeTheRestAndExpectServed(producer, consumer, t, 1);
  }

  /**
   * A completion of a streamed lease before its last layer was announced is refused (nothing can
   * have read what is not computed yet) and the lease goes on to be read in full.
   */
  @Test
  void aCompletionBeforeTheLastLayerIsRefusedAndTheLeaseGoesOn() {
    List<Transport> producerAgents = new CopyOnWriteArrayList<>();
    List<Transport> consumerAgents = new CopyOnWriteArrayList<>();
    Engine producer = start("p", Role.PRODUCER, streamedModel(), 1, capture(producerAgents));
    Engine consumer = start("d", Role.CONSUMER, streamedModel(), 1, capture(consumerAgents));
    Transfer t = streamedThroughLayerZero(producer, consumer, "stream-3");

    consumerAgents
        .get(0)
        .notify(
            producerAgents.get(0).agentName(),
            Messages.completion(
                new LeaseRef(t.requestId(), producer.leaseToken(t.requestId())),
                consumer.connector.settings().engineId()));
    awaitRejected(producer, producer, RejectedInput.LAYERS_MISSING);

    assertThat(producer.connector.status().producer().orElseThrow().liveLeases()).isEqualTo(1);
    computeTheRestAndExpectServed(producer, consumer, t, 1);
  }

  /**
   * P's engine aborts a request it streams: the lease is revoked, the consumer reading it is told
   * at once and fails the load without using what it read, and P's engine frees the blocks at its
   * next step.
   */
  @Test
  void aRequestAbortedOnTheProducerMidStreamFailsTheLoadAtOnce() {
    Engine producer = start("p", Role.PRODUCER, streamedModel(), 1);
    Engine consumer = start("d", Role.CONSUMER, streamedModel(), 1);
    Transfer t = streamedThroughLayerZero(producer, consumer, "stream-4");

    FinishDecision aborted = producer.finishPrefill(t.requestId(), TOKENS, true);
    awaitEnded(producer, consumer, t.requestId());

    assertThat(aborted.delayFree()).isTrue();
    assertThat(consumer.received).doesNotContain(t.requestId());
    assertThat(consumer.failed.get(t.requestId()).reason()).contains("REVOKED");
    producer.step();
    assertThat(producer.sent).containsExactly(t.requestId());
    assertThat(producer.connector.status().producer().orElseThrow().leasesEnded())
        .containsEntry(EndReason.REVOKED, 1L);
  }

  /**
   * The client goes away on D mid-stream: D gives the lease back and the lease ends RELEASED, but
   * P's engine, still computing into the blocks, is not told to free them; once it finishes the
   * request it is answered to free them at once, and never told again.
   */
  @Test
  void aLoadCancelledMidStreamEndsTheLeaseButPFreesTheBlocksOnlyOnceItFinished() {
    Engine producer = start("p", Role.PRODUCER, streamedModel(), 1);
    Engine consumer = start("d", Role.CONSUMER, streamedModel(), 1);
    Transfer t = streamedThroughLayerZero(producer, consumer, "stream-5");

    assertThat(consumer.connector.scheduler().cancelLoad(t.requestId(), "client went away"))
        .isTrue();
    stepUntil(
        producer,
        consumer,
        () ->
            assertThat(producer.connector.status().producer().orElseThrow().liveLeases()).isZero());
    settle(producer, consumer);

    assertThat(producer.connector.status().producer().orElseThrow().leasesEnded())
        .containsEntry(EndReason.RELEASED, 1L);
    assertThat(producer.sent).isEmpty();
    producer.computeLayer(t.requestId(), 1);
    FinishDecision finished = producer.finishPrefill(t.requestId(), TOKENS, false);
    assertThat(finished.delayFree()).isFalse();
    settle(producer, consumer);
    assertThat(producer.sent).isEmpty();
  }

  /**
   * P's connector closes mid-stream (its process shuts down): the consumer reading a streamed lease
   * is told, and fails the load at once, serving nothing.
   */
  @Test
  void theProducerClosingMidStreamFailsTheLoadAtOnce() {
    Engine producer = start("p", Role.PRODUCER, streamedModel(), 1);
    Engine consumer = start("d", Role.CONSUMER, streamedModel(), 1);
    Transfer t = streamedThroughLayerZero(producer, consumer, "stream-6");

    producer.connector.close();
    stepUntil(consumer, null, () -> assertThat(consumer.failed).containsKey(t.requestId()));

    assertThat(consumer.received).isEmpty();
    assertThat(consumer.failed.get(t.requestId()).reason()).contains("REVOKED");
  }

  /**
   * A rank that reports a layer out of turn is refused naming the layer it owes; a report for a
   * request whose lease is not streamed is ignored, so an engine may report every request's layers.
   */
  @Test
  void aLayerSavedOutOfTurnIsRefusedAndOneOfARequestNotStreamedIsIgnored() {
    Engine producer = start("p", Role.PRODUCER, streamedModel(), 1);
    Engine consumer = start("d", Role.CONSUMER, streamedModel(), 1);
    Transfer t = startStreamed(producer, consumer, "stream-7", TOKENS);

    assertThatThrownBy(() -> producer.connector.worker(0).layerSaved(t.requestId(), 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("its next layer is 0");
    producer.connector.worker(0).layerSaved("never-streamed", 0);

    computeTheRestAndExpectServed(producer, consumer, t, 0);
  }

  /**
   * A prompt shorter than the producer's streaming threshold is not streamed: its lease is granted
   * once its prefill finished, and the load goes the whole-request way.
   */
  @Test
  void aPromptShorterThanTheThresholdIsLeasedOnceItsPrefillFinished() {
    streamingMinTokens = TOKENS + 1;
    Engine producer = start("p", Role.PRODUCER, streamedModel(), 1);
    Engine consumer = start("d", Role.CONSUMER, streamedModel(), 1);

    assertThat(
            producer
                .connector
                .scheduler()
                .requestStarted(
                    new StartedRequest(
                        "short", List.of(1, 3, 5, 7), Prompts.of("short", TOKENS), TOKENS)))
        .isEmpty();
    Transfer t = transfer(producer, consumer, "short-1", TOKENS, 0);

    assertThat(consumer.received).contains(t.requestId());
    consumer.assertHolds(t, 0, TOKENS);
  }

  /**
   * A READ of announced layers that fails is read once more, and the load completes byte for byte;
   * a second failure fails the load, serving nothing.
   */
  @ParameterizedTest(name = "{0} failed READs")
  @ValueSource(ints = {1, 2})
  void aFailedLayerReadIsReadOnceMoreThenTheLoadFails(int failures) {
    List<FailingReads> agents = new CopyOnWriteArrayList<>();
    Engine producer = start("p", Role.PRODUCER, streamedModel(), 1);
    Engine consumer =
        start(
            "d",
            Role.CONSUMER,
            streamedModel(),
            1,
            transport -> {
              FailingReads failing = new FailingReads(transport);
              agents.add(failing);
              return failing;
            });
    Transfer t = streamedThroughLayerZero(producer, consumer, "stream-8");

    agents.get(0).failNext(failures);
    for (int layer = 1; layer < STREAMED_LAYERS; layer++) {
      producer.computeLayer(t.requestId(), layer);
    }
    awaitEnded(producer, consumer, t.requestId());

    if (failures == 1) {
      assertThat(consumer.received).contains(t.requestId());
      consumer.assertHolds(t, 0, TOKENS);
    } else {
      assertThat(consumer.received).isEmpty();
      assertThat(consumer.failed.get(t.requestId()).reason()).contains("read twice");
    }
  }

  /**
   * A large layer is read in stages of consecutive blocks, each its own READs, so that its blocks
   * are checked while later ones still move and what is left to check once the last layer landed is
   * a small stage rather than the whole layer: every layer takes several READs, and every byte
   * lands in place.
   */
  @Test
  void aLargeLayerIsReadInStagesOfBlocksCheckedAsTheyLand() {
    // 8 KiB a token and layer (K and V, 4 heads of 512 two-byte elements): 8 MiB a layer of 1,024
    // tokens, eight times the fewest bytes of a layer's stage.
    KvLayout large =
        new KvLayout(
            MODEL,
            DTYPE_BYTES,
            STREAMED_LAYERS,
            2,
            KV_HEADS,
            0,
            KV_HEADS,
            512,
            16,
            160, // one request's 64 blocks, as the fixture hands them out (every other one)
            KvLayout.MemoryOrder.BLOCK_MAJOR);
    List<FailingReads> agents = new CopyOnWriteArrayList<>();
    Engine producer = start("p", Role.PRODUCER, large, 1);
    Engine consumer =
        start(
            "d",
            Role.CONSUMER,
            large,
            1,
            transport -> {
              FailingReads counting = new FailingReads(transport);
              agents.add(counting);
              return counting;
            });
    int tokens = 1_024;
    Transfer t = startStreamed(producer, consumer, "stream-large", tokens);

    for (int layer = 0; layer < STREAMED_LAYERS; layer++) {
      int before = agents.get(0).posted();
      producer.computeLayer(t.requestId(), layer);
      int through = layer + 1;
      stepUntil(producer, consumer, () -> consumer.assertHoldsLayers(t, 0, through));
      assertThat(agents.get(0).posted() - before).as("READs of layer " + layer).isGreaterThan(1);
    }
    awaitEnded(producer, consumer, t.requestId());

    assertThat(consumer.failed).isEmpty();
    assertThat(consumer.received).contains(t.requestId());
    consumer.assertHolds(t, 0, tokens);
  }

  /**
   * A transport that counts the transfers posted, and whose next READs posted report failure, as a
   * broken link would, when told to.
   */
  private static final class FailingReads extends ForwardingTransport {
    private final Set<TransferHandle> doomed = ConcurrentHashMap.newKeySet();
    private final AtomicInteger toFail = new AtomicInteger();
    private final AtomicInteger posted = new AtomicInteger();

    FailingReads(Transport delegate) {
      super(delegate);
    }

    void failNext(int count) {
      toFail.set(count);
    }

    /** How many transfers were posted through this transport. */
    int posted() {
      return posted.get();
    }

    private TransferHandle mark(TransferHandle handle) {
      posted.incrementAndGet();
      if (toFail.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        doomed.add(handle);
      }
      return handle;
    }

    @Override
    public TransferHandle post(
        TransferOp op,
        DescriptorList local,
        String remoteAgent,
        DescriptorList remote,
        Optional<byte[]> notification) {
      return mark(super.post(op, local, remoteAgent, remote, notification));
    }

    @Override
    public TransferHandle post(
        TransferOp op,
        PreparedList local,
        int[] localIndices,
        PreparedList remote,
        int[] remoteIndices,
        Optional<byte[]> notification) {
      return mark(super.post(op, local, localIndices, remote, remoteIndices, notification));
    }

    @Override
    public TransferStatus status(TransferHandle handle) {
      TransferStatus status = super.status(handle);
      return doomed.contains(handle) && !(status instanceof TransferStatus.InProgress)
          ? new TransferStatus.Failed("injected: the link dropped the read")
          : status;
    }
  }

  private static KvLayout streamedModel() {
    return model(8, 32, KvLayout.MemoryOrder.BLOCK_MAJOR, STREAMED_LAYERS);
  }

  /** Starts {@code requestId} streamed and waits until the consumer holds its layer 0. */
  private Transfer streamedThroughLayerZero(Engine producer, Engine consumer, String requestId) {
    Transfer t = startStreamed(producer, consumer, requestId, TOKENS);
    producer.computeLayer(t.requestId(), 0);
    awaitHolds(producer, consumer, t, 1);
    return t;
  }

  /**
   * The producer computes {@code t}'s layers from {@code fromLayer} on; the load ends served, every
   * byte where the consumer's layout puts it.
   */
  private void computeTheRestAndExpectServed(
      Engine producer, Engine consumer, Transfer t, int fromLayer) {
    for (int layer = fromLayer; layer < STREAMED_LAYERS; layer++) {
      producer.computeLayer(t.requestId(), layer);
    }
    awaitEnded(producer, consumer, t.requestId());
    assertThat(consumer.received).contains(t.requestId());
    consumer.assertHolds(t, 0, TOKENS);
  }

  private void awaitHolds(Engine producer, Engine consumer, Transfer t, int layers) {
    stepUntil(producer, consumer, () -> consumer.assertHoldsLayers(t, 0, layers));
  }

  private void awaitRejected(Engine producer, Engine counting, RejectedInput kind) {
    stepUntil(
        producer,
        counting,
        () -> assertThat(counting.connector.status().rejected().get(kind)).isPositive());
  }

  /** Checksums of 0 for every block of {@code t}'s lease, for {@code layers} layers of one rank. */
  private static List<List<List<Integer>>> zeros(Transfer t, int layers) {
    List<List<Integer>> byLayer = new ArrayList<>();
    for (int l = 0; l < layers; l++) {
      byLayer.add(Collections.nCopies(t.producerBlocks().size(), 0));
    }
    return List.of(byLayer);
  }

  private static byte[] encode(ProtocolMessage message) {
    return ProtocolMessage.encode(message);
  }

  private static UnaryOperator<Transport> capture(List<Transport> into) {
    return transport -> {
      into.add(transport);
      return transport;
    };
  }
}
