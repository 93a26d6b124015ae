package io.kvbridge.tck.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.net.HandshakeAddress;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.spi.PeerStatus;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.tck.Prompts;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.Transport;
import io.kvbridge.wire.ConsumerHandshake;
import io.kvbridge.wire.Handshake;
import io.kvbridge.wire.HandshakeChannel;
import io.kvbridge.wire.ProducerHandshake;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Forged peers without a deployment secret: a new producer id answering with the real producer's
 * metadata, a producer's earlier start, a consumer's replayed handshake. Each is refused before
 * anything is loaded, and the live pair serves on at once.
 */
public abstract class ForgedPeerConformance extends PullProtocolFixture {

  /** These tests, run against {@code connector}. */
  protected ForgedPeerConformance(ConnectorUnderTest connector) {
    super(connector);
  }

  @Test
  void aNewProducerAnsweringWithTheProducersAlteredMetadataIsRefusedAndThePairServesAtOnce() {
    establishPeer();
    assertANewProducerAnsweringWithIsRefusedAndThePairServes(producerMetadataWithAnExtraRegion());
  }

  @Test
  void aNewProducerAnsweringWithTheProducersOwnMetadataIsRefusedAndThePairServesAtOnce() {
    establishPeer();
    assertANewProducerAnsweringWithIsRefusedAndThePairServes(producerTransport().localMetadata());
  }

  /**
   * A load whose parameters name a new producer id at an address that answers with {@code metadata}
   * (which names the real producer's agent) is refused as forged, the pair serves on, and the
   * forged id is never listed.
   */
  private void assertANewProducerAnsweringWithIsRefusedAndThePairServes(byte[] metadata) {
    String impostor = "evil-p-" + UUID.randomUUID().toString().substring(0, 8);
    String forgedAt = forgedProducer(impostor, 7, metadata);

    pairStillServesAfter(
        () -> {
          TransferParams honest = prefill("p-forged", List.of(9));
          load(
              "d-forged",
              altered(
                  honest,
                  "producer_engine_id",
                  impostor,
                  "handshake_address",
                  forgedAt,
                  "producer_incarnation",
                  "0000000000000007"),
              List.of(9));
          assertForgeryRefused("d-forged", "which belongs to producer");
        });
    assertThat(consumer.consumerPart().producers())
        .extracting(PeerStatus::engineId)
        .containsExactly(producer.connector.settings().engineId());
  }

  @Test
  void metadataOfAnEarlierStartOfTheProducerIsRefusedAsStaleAndThePairServesAtOnce() {
    establishPeer();
    byte[] captured = producerTransport().localMetadata();
    long earlier = producer.connector.settings().incarnation();
    producer = restart(producer);
    establishPeer();
    String producerId = producer.connector.settings().engineId();
    String forgedAt = forgedProducer(producerId, earlier, captured);

    pairStillServesAfter(
        () -> {
          TransferParams honest = prefill("p-stale", List.of(9));
          load(
              "d-stale",
              altered(
                  honest,
                  "handshake_address",
                  forgedAt,
                  "producer_incarnation",
                  java.util.HexFormat.of().toHexDigits(earlier)),
              List.of(9));
          assertForgeryRefused("d-stale", "stale metadata");
        });
    assertThat(consumer.consumerPart().producers())
        .singleElement()
        .satisfies(
            peer -> {
              assertThat(peer.engineId()).isEqualTo(producerId);
              assertThat(peer.incarnation()).isEqualTo(producer.connector.settings().incarnation());
            });
  }

  @Test
  void aReplayedHandshakeOfAnEarlierStartOfTheConsumerIsRefusedAndTheLiveConsumerIsServed()
      throws Exception {
    establishPeer();
    Handshake.Request captured =
        new Handshake.Request(
            consumer.connector.settings().engineId(),
            consumer.connector.settings().incarnation(),
            List.of(CONSUMER_LAYOUT),
            consumerTransport().localMetadata());
    consumer = restart(consumer);
    establishPeer();

    pairStillServesAfter(
        () -> {
          Handshake.Response answer = replay(captured);
          assertThat(answer)
              .isInstanceOfSatisfying(
                  Handshake.Refused.class,
                  refused ->
                      assertThat(refused.reason())
                          .contains("handshake refused as forged")
                          .contains("a replayed handshake of an earlier start"));
          assertThat(producer.connector.status().rejected())
              .containsEntry(RejectedInput.FORGED_PEER, 1L);
        });
    assertThat(producer.producerPart().consumers())
        .containsExactly(consumer.connector.settings().engineId());
  }

  /**
   * Runs {@code forgery} while a genuine load from the producer is confirmed and waits for its
   * blocks, then checks that the pair serves at once: that load and a new one are received, byte
   * exact, with no time passing.
   */
  private void pairStillServesAfter(Runnable forgery) {
    Map<Integer, byte[]> written = producer.fill(List.of(5, 6));
    TransferParams inFlight = prefill("p-in-flight", List.of(5));
    assertThat(
            confirm(
                consumer, "d-in-flight", inFlight, Prompts.of("p-in-flight", inFlight.tokens())))
        .isTrue();

    forgery.run();

    consumer.connector.scheduler().afterAllocate("d-in-flight", List.of(50));
    consumer.connector.worker().startLoad(consumer.connector.scheduler().buildStepMetadata());
    settle("d-in-flight");
    TransferParams next = prefill("p-next", List.of(6));
    load("d-next", next, List.of(51));
    settle("d-next");

    assertThat(consumer.failed).doesNotContainKeys("d-in-flight", "d-next");
    assertThat(consumer.received).contains("d-in-flight", "d-next");
    assertThat(consumer.block(50)).isEqualTo(written.get(5));
    assertThat(consumer.block(51)).isEqualTo(written.get(6));
  }

  /** The consumer refused load {@code requestId} as forged, for {@code why}, and counted it. */
  private void assertForgeryRefused(String requestId, String why) {
    assertThat(consumer.failed).as("loads the consumer refused").containsKey(requestId);
    assertThat(consumer.failed.get(requestId).reason())
        .contains("handshake refused as forged")
        .contains(why);
    assertThat(consumer.connector.status().rejected()).containsEntry(RejectedInput.FORGED_PEER, 1L);
  }

  /**
   * The producer's lead metadata as it was while one more region than its KV cache was registered:
   * a blob naming the producer's agent that differs from the one the consumer loaded.
   */
  private byte[] producerMetadataWithAnExtraRegion() {
    Transport lead = producerTransport();
    try (KvMemory extra = lead.allocate(PRODUCER_LAYOUT.blockBytes())) {
      lead.register(extra);
      byte[] metadata = lead.localMetadata();
      lead.deregister(extra);
      return metadata;
    }
  }

  /**
   * Answers every handshake, at an address of its own, as producer {@code engineId} of start {@code
   * incarnation}: the producer's one rank (its layout, its region) with {@code metadata}, an
   * Accepted frame of the producer's altered or captured earlier. Stops when the test ends.
   */
  protected String forgedProducer(String engineId, long incarnation, byte[] metadata) {
    KvMemory memory = producer.memory;
    HandshakeAddress at =
        HandshakeAddress.parse("local://forged-" + UUID.randomUUID().toString().substring(0, 8));
    HandshakeChannel.Responder answers =
        new ProducerHandshake(
            Optional.empty(),
            request ->
                new Handshake.Accepted(
                    engineId,
                    incarnation,
                    clock.nanoTime(),
                    List.of(
                        new Handshake.Rank(
                            PRODUCER_LAYOUT,
                            List.of(memory.address()),
                            memory.deviceId(),
                            memory.kind(),
                            metadata))),
            ProducerHandshake.Listener.NONE);
    try {
      HandshakeChannel.Server server = HandshakeChannel.forAddress(at).serve(at, engineId, answers);
      forgers.add(server);
      return server.address().toString();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** Sends {@code captured}, a consumer's request of earlier, to the producer; its answer. */
  private Handshake.Response replay(Handshake.Request captured) {
    HandshakeAddress address =
        HandshakeAddress.parse(producer.producerPart().handshakeAddress().orElseThrow());
    try {
      return ConsumerHandshake.run(
              HandshakeChannel.forAddress(address),
              address,
              captured,
              Optional.empty(),
              HANDSHAKE_TIMEOUT,
              System::nanoTime)
          .response();
    } catch (java.io.IOException e) {
      throw new IllegalStateException("the replayed handshake got no answer", e);
    }
  }
}
