package io.kvbridge.tck.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.net.HandshakeAddress;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.ProducerStatus;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.tck.Prompts;
import io.kvbridge.wire.Handshake;
import io.kvbridge.wire.HandshakeChannel;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The handshake: how a consumer finds a producer (its address or the peer directory), the
 * deployment secret both must prove, the layouts they must share, and what each side then knows of
 * the other.
 */
public abstract class HandshakeConformance extends PullProtocolFixture {

  /** These tests, run against {@code connector}. */
  protected HandshakeConformance(ConnectorUnderTest connector) {
    super(connector);
  }

  @Test
  void paramsWithoutAHandshakeAddressAreResolvedThroughThePeerDirectory() {
    String address = producer.producerPart().handshakeAddress().orElseThrow();
    String producerId = producer.connector.settings().engineId();
    directory = id -> id.equals(producerId) ? Optional.of(address) : Optional.empty();
    consumer = node("decode-discovering", Role.CONSUMER, CONSUMER_LAYOUT);
    Map<Integer, byte[]> written = producer.fill(List.of(3));
    TransferParams params = withoutHandshakeAddress(prefill("p-1", List.of(3)));

    load("d-1", params, List.of(8));
    settle("d-1");

    assertThat(consumer.received).contains("d-1");
    assertThat(consumer.block(8)).isEqualTo(written.get(3));
  }

  @Test
  void paramsWithoutAHandshakeAddressThatNoDirectoryKnowsAreRefused() {
    TransferParams params = withoutHandshakeAddress(prefill("p-1", List.of(3)));

    load("d-1", params, List.of(8));

    assertThat(consumer.failed.get("d-1").reason()).contains("has no handshake address");
    assertThat(consumer.consumerPart().loadsFailed()).isEqualTo(1);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
  }

  /** {@code params} as a router that relies on discovery would pass them: with no address. */
  protected static TransferParams withoutHandshakeAddress(TransferParams params) {
    Map<String, Object> map = new HashMap<>(params.toMap());
    map.remove("handshake_address");
    return TransferParams.fromMap(map);
  }

  private static final String SECRET = "this deployment's handshake secret";

  @Test
  void pairThatSharesTheDeploymentSecretHandshakesAndServes() {
    Node securedProducer = node("prefill-secured", Role.PRODUCER, PRODUCER_LAYOUT, SECRET);
    Node securedConsumer = node("decode-secured", Role.CONSUMER, CONSUMER_LAYOUT, SECRET);
    producer = securedProducer;
    Map<Integer, byte[]> written = producer.fill(List.of(6));
    TransferParams params = prefill("p-1", List.of(6));

    consumer = securedConsumer;
    load("d-1", params, List.of(9));
    settle("d-1");

    assertThat(consumer.received).contains("d-1");
    assertThat(consumer.block(9)).isEqualTo(written.get(6));
  }

  @Test
  void consumerWithoutTheSecretIsRefusedAndLearnsNothingOfTheProducer() {
    producer = node("prefill-secured", Role.PRODUCER, PRODUCER_LAYOUT, SECRET);
    TransferParams params = prefill("p-1", List.of(1));

    load("d-1", params, List.of(1));

    // The consumer ends the handshake at P's greeting: it sent nothing, so P has nothing to count.
    assertThat(consumer.failed.get("d-1").reason())
        .contains("requires the deployment's secret and this consumer has none");
    assertThat(consumer.connector.status().rejected())
        .containsEntry(RejectedInput.HANDSHAKE_UNAUTHENTICATED, 1L);
    assertThat(producer.producerPart().consumers()).isEmpty();
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
  }

  @Test
  void consumerWithAnotherSecretIsRefused() {
    producer = node("prefill-secured", Role.PRODUCER, PRODUCER_LAYOUT, SECRET);
    consumer = node("decode-other", Role.CONSUMER, CONSUMER_LAYOUT, "another deployment's secret");
    TransferParams params = prefill("p-1", List.of(1));

    load("d-1", params, List.of(1));

    // P's proof does not verify under the consumer's secret: the consumer stops before it sends
    // its request, so P never learns who asked.
    assertThat(consumer.failed.get("d-1").reason())
        .contains("did not prove the deployment's secret");
    assertThat(consumer.connector.status().rejected())
        .containsEntry(RejectedInput.HANDSHAKE_UNAUTHENTICATED, 1L);
    assertThat(producer.producerPart().consumers()).isEmpty();
    assertThat(consumer.consumerPart().producers()).isEmpty();
  }

  @Test
  void consumerWithTheSecretRefusesAProducerThatDoesNotProveIt() {
    consumer = node("decode-secured", Role.CONSUMER, CONSUMER_LAYOUT, SECRET);
    TransferParams params = prefill("p-1", List.of(1));

    load("d-1", params, List.of(1));

    assertThat(consumer.failed.get("d-1").reason())
        .contains("trusts only producers that prove the deployment's secret");
    assertThat(consumer.consumerPart().producers()).isEmpty();
  }

  @Test
  void incompatibleLayoutIsRefusedAtTheHandshakeQuotingOnlyTheConsumersValue() {
    Node other = node("other", Role.CONSUMER, KvLayout.opaque("another-model/fp8", 4, 256, 64));
    TransferParams params = prefill("p-1", List.of(1));

    load(other, "d-1", params, Prompts.of(params.requestId(), params.tokens()), List.of(1));

    assertThat(other.failed.get("d-1").reason())
        .contains("incompatible KV layout")
        .contains("model another-model/fp8 differs from the producer's")
        .doesNotContain(PRODUCER_LAYOUT.model());
    assertThat(producer.connector.status().rejected())
        .containsEntry(RejectedInput.HANDSHAKE_REFUSED, 1L);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
  }

  @Test
  void malformedHandshakeIsRefusedAndCounted() throws Exception {
    HandshakeAddress address =
        HandshakeAddress.parse(producer.producerPart().handshakeAddress().orElseThrow());

    byte[] answer =
        HandshakeChannel.forAddress(address)
            .exchange(address, greeting -> new byte[] {1, 2, 3}, Duration.ofSeconds(5));

    assertThat(Handshake.decodeResponse(answer)).isInstanceOf(Handshake.Refused.class);
    assertThat(producer.connector.status().rejected())
        .containsEntry(RejectedInput.HANDSHAKE_REFUSED, 1L);
  }

  @Test
  void aProducerWhoseKvCacheIsNotRegisteredYetAnswersNoHandshakes() {
    ConnectorSettings settings =
        ConnectorSettings.builder(underTest.provider().type(), "prefill-" + UUID.randomUUID())
            .role(Role.PRODUCER)
            .handshakeAddress(underTest.handshakeAddress())
            .clock(clock)
            // Driven step by step on a manual clock: no progress thread between steps
            // (ProgressConformance runs one on the real clock).
            .progressInterval(Duration.ZERO)
            .properties(underTest.connectorProperties())
            .build();
    try (KvConnector unstarted = newConnector(settings)) {
      ProducerStatus status = unstarted.status().producer().orElseThrow();

      assertThat(status.handshakeAddress()).isEmpty();
      assertThat(status.consumers()).isEmpty();
      assertThat(status.droppedConnections().values()).containsOnly(0L);
    }
  }

  @Test
  void eachSideNamesThePeersItHandshookWith() {
    TransferParams params = establishPeer();

    assertThat(producer.producerPart().consumers())
        .containsExactly(consumer.connector.settings().engineId());
    assertThat(consumer.consumerPart().producers())
        .singleElement()
        .satisfies(
            peer -> {
              assertThat(peer.engineId()).isEqualTo(params.producerEngineId());
              assertThat(peer.incarnation()).isEqualTo(params.producerIncarnation());
              assertThat(peer.address()).isEqualTo(params.handshakeAddress().orElseThrow());
              // Both engines read one clock, so the estimate finds no offset.
              assertThat(peer.clockOffsetNanos()).isZero();
              assertThat(peer.clockUncertaintyNanos()).isPositive();
            });
  }
}
