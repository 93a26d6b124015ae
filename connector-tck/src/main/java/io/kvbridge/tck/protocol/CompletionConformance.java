package io.kvbridge.tck.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.lease.EndReason;
import io.kvbridge.lease.LeaseToken;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.runtime.PullConnector;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.tck.Messages;
import io.kvbridge.tck.Prompts;
import io.kvbridge.transfer.Transport;
import io.kvbridge.wire.LeaseRef;
import io.kvbridge.wire.ProtocolMessage;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Completions and the other notifications between the engines, trusted only when they prove it: a
 * completion ends a lease only with its token, from a consumer that confirmed that very read, once
 * per consumer; anything else is counted and frees nothing.
 */
public abstract class CompletionConformance extends PullProtocolFixture {

  /** These tests, run against {@code connector}. */
  protected CompletionConformance(ConnectorUnderTest connector) {
    super(connector);
  }

  @Test
  void completionWithAWrongTokenFreesNothingAndIsCounted() {
    establishPeer();
    prefill("p-2", List.of(2));

    sendFromConsumer(new LeaseRef("p-2", LeaseToken.random().value()));

    awaitRejected(producer, RejectedInput.WRONG_TOKEN);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
    assertThat(producer.drain().sent).doesNotContain("p-2");
  }

  @Test
  void completionForAnUnknownLeaseFreesNothingAndIsCounted() {
    establishPeer();
    prefill("p-2", List.of(2));

    sendFromConsumer(new LeaseRef("ghost", LeaseToken.random().value()));

    awaitRejected(producer, RejectedInput.UNKNOWN_LEASE);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
  }

  @Test
  void duplicateCompletionIsCountedAndEndsNothingTwice() {
    TransferParams params = establishPeer();

    sendFromConsumer(new LeaseRef(params.requestId(), params.leaseToken()));

    awaitRejected(producer, RejectedInput.LATE_OR_DUPLICATE);
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.READ, 1L);
    assertThat(producer.sentCount.get(params.requestId())).isEqualTo(1);
  }

  @Test
  void completionWithoutAConfirmationIsRefusedAndTheLeaseStaysLiveForAConfirmedRead() {
    establishPeer();
    Map<Integer, byte[]> written = producer.fill(List.of(2, 3));
    TransferParams params = prefill("p-1", List.of(2, 3));

    // The right token and the right read digest, but no CONFIRM before it.
    sendFromConsumer(completionOf(params, 0));

    awaitRejected(producer, RejectedInput.NOT_CONFIRMED);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
    assertThat(producer.drain().sent).doesNotContain("p-1");
    // The NACK reaches a consumer with no load of the lease yet (a NACK names no message).
    awaitRejected(consumer, RejectedInput.UNEXPECTED_REPLY);
    load("d-1", params, List.of(40, 41));
    settle("d-1");
    assertThat(consumer.received).contains("d-1");
    assertThat(consumer.block(40)).isEqualTo(written.get(2));
    assertThat(consumer.block(41)).isEqualTo(written.get(3));
    awaitTrue(() -> producer.drain().sent.contains("p-1"));
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.READ, 2L);
  }

  @Test
  void completionSkippingOtherTokensThanItsConfirmationIsRefusedAndTheConfirmedReadStillCounts() {
    establishPeer();
    TransferParams params = prefill("p-1", List.of(2, 3));
    LeaseRef lease = new LeaseRef(params.requestId(), params.leaseToken());
    sendFromConsumer(
        new ProtocolMessage.Confirm(
            lease, consumerId(), readDigestOf(params, 0), 0, clock.nanoTime()));
    // The producer's CONFIRMED reaches a consumer that has no such load.
    awaitTrue(
        () -> {
          producer.drain();
          consumer.drain();
          return consumer.connector.status().rejected().get(RejectedInput.UNEXPECTED_REPLY) >= 1;
        });

    // Each digest is the lease's for the tokens it skips; only the confirmed one may complete.
    sendFromConsumer(completionOf(params, 4));

    awaitRejected(producer, RejectedInput.NOT_CONFIRMED);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
    assertThat(producer.drain().sent).doesNotContain("p-1");
    sendFromConsumer(completionOf(params, 0));
    awaitTrue(() -> producer.drain().sent.contains("p-1"));
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.READ, 2L);
  }

  @Test
  void withTwoAcksRequiredTheFirstConsumerIsAcknowledgedAndTheLeaseEndsReadOnlyWithTheSecond() {
    acksRequired = 2;
    producer = node("prefill-two-acks", Role.PRODUCER, PRODUCER_LAYOUT);
    Node second = node("decode-second", Role.CONSUMER, CONSUMER_LAYOUT);
    Map<Integer, byte[]> written = producer.fill(List.of(2, 3));
    TransferParams params = prefill("p-1", List.of(2, 3));

    load("d-1", params, List.of(40, 41));
    settle("d-1");

    assertThat(consumer.received).contains("d-1");
    assertThat(producer.drain().sent).doesNotContain("p-1");
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.READ, 0L);

    load(second, "d-9", params, Prompts.of(params.requestId(), params.tokens()), List.of(7, 8));
    settle(second, "d-9");

    assertThat(second.received).contains("d-9");
    assertThat(second.block(7)).isEqualTo(written.get(2));
    assertThat(second.block(8)).isEqualTo(written.get(3));
    awaitTrue(() -> producer.drain().sent.contains("p-1"));
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.READ, 1L);
    assertThat(producer.producerPart().liveLeases()).isZero();
    assertThat(producer.sentCount.get("p-1")).isEqualTo(1);
  }

  @Test
  void withTwoAcksRequiredTheFirstConsumersRepeatedCompletionIsRefusedAndCountsOnce() {
    acksRequired = 2;
    producer = node("prefill-two-acks", Role.PRODUCER, PRODUCER_LAYOUT);
    Node second = node("decode-second", Role.CONSUMER, CONSUMER_LAYOUT);
    TransferParams params = prefill("p-1", List.of(2, 3));
    load("d-1", params, List.of(40, 41));
    settle("d-1");
    assertThat(consumer.received).contains("d-1");

    sendFromConsumer(completionOf(params, 0));

    awaitRejected(producer, RejectedInput.LATE_OR_DUPLICATE);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
    assertThat(producer.drain().sent).doesNotContain("p-1");
    load(second, "d-9", params, Prompts.of(params.requestId(), params.tokens()), List.of(7, 8));
    settle(second, "d-9");
    assertThat(second.received).contains("d-9");
    awaitTrue(() -> producer.drain().sent.contains("p-1"));
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.READ, 1L);
  }

  @Test
  void malformedNotificationIsCounted() {
    establishPeer();

    consumerTransport().notify(producerTransport().agentName(), new byte[] {'K', 'V', 'B', 1, 42});

    awaitRejected(producer, RejectedInput.MALFORMED_MESSAGE);
  }

  @Test
  void completionFromAnAgentThatNeverHandshookIsCounted() {
    Node stranger = node("stranger", Role.CONSUMER, CONSUMER_LAYOUT);
    Transport strangerTransport = ((PullConnector) stranger.connector).transport();
    String producerAgent =
        strangerTransport.loadRemoteMetadata(producerTransport().localMetadata());
    TransferParams params = prefill("p-1", List.of(1));

    strangerTransport.notify(
        producerAgent,
        io.kvbridge.tck.Messages.completion(
            new LeaseRef(params.requestId(), params.leaseToken()), "stranger"));

    awaitRejected(producer, RejectedInput.UNKNOWN_PEER);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
  }

  @Test
  void ackNobodyWaitsForIsCountedAndServesNothing() {
    establishPeer();

    producerTransport()
        .notify(
            consumerTransport().agentName(),
            Messages.ack(new LeaseRef("p-9", LeaseToken.random().value())));

    awaitRejected(consumer, RejectedInput.UNEXPECTED_REPLY);
    assertThat(consumer.received).containsExactly("d-warmup");
  }

  @Test
  void completionSentToAnEngineThatDoesNotProduceIsCounted() {
    establishPeer();

    producerTransport()
        .notify(
            consumerTransport().agentName(),
            Messages.completion(
                new LeaseRef("p-9", LeaseToken.random().value()),
                producer.connector.settings().engineId()));

    awaitRejected(consumer, RejectedInput.UNEXPECTED_REPLY);
  }
}
