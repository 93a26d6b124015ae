package io.kvbridge.tck.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.lease.EndReason;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.tck.Prompts;
import io.kvbridge.wire.LeaseRef;
import io.kvbridge.wire.ProtocolMessage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Peers that restart, cancel, go away or fall silent: every load waiting on them ends with a
 * reason, nothing stays held, and the pair serves again after one handshake.
 */
public abstract class PeerLifecycleConformance extends PullProtocolFixture {

  /** These tests, run against {@code connector}. */
  protected PeerLifecycleConformance(ConnectorUnderTest connector) {
    super(connector);
  }

  @Test
  void producerRestartedUnderItsEngineIdServesAgainAfterOneHandshake() {
    establishPeer();
    TransferParams stale = prefill("p-stale", List.of(1));

    producer = restart(producer);
    Map<Integer, byte[]> written = producer.fill(List.of(2, 3));
    TransferParams fresh = prefill("p-fresh", List.of(2, 3));
    load("d-fresh", fresh, List.of(20, 21));
    settle("d-fresh");
    load("d-stale", stale, List.of(10));
    settle("d-stale");

    assertThat(consumer.received).contains("d-fresh");
    assertThat(consumer.block(20)).isEqualTo(written.get(2));
    assertThat(consumer.block(21)).isEqualTo(written.get(3));
    assertThat(consumer.failed.get("d-stale").reason()).contains("restarted");
  }

  @Test
  void consumerRestartedUnderItsEngineIdIsHandshakenAgainAndServed() {
    establishPeer();

    consumer = restart(consumer);
    Map<Integer, byte[]> written = producer.fill(List.of(4));
    TransferParams params = prefill("p-after", List.of(4));
    load("d-after", params, List.of(7));
    settle("d-after");

    assertThat(consumer.received).contains("d-after");
    assertThat(consumer.block(7)).isEqualTo(written.get(4));
    assertThat(producer.connector.status().rejected())
        .containsEntry(RejectedInput.HANDSHAKE_REFUSED, 0L);
  }

  @Test
  void loadCancelledOnTheConsumerReleasesTheLeaseOnTheProducerAtOnce() {
    TransferParams params = prefill("p-1", List.of(1, 2));
    assertThat(confirm(consumer, "d-1", params, Prompts.of("p-1", params.tokens()))).isTrue();
    consumer.connector.scheduler().afterAllocate("d-1", List.of(5, 6));

    assertThat(consumer.connector.scheduler().cancelLoad("d-1", "client went away")).isTrue();

    awaitTrue(() -> producer.drain().sent.contains("p-1"));
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.RELEASED, 1L);
    assertThat(consumer.consumerPart().loadsInFlight()).isZero();
    consumer.drain();
    assertThat(consumer.received).doesNotContain("d-1");
    assertThat(consumer.failed).doesNotContainKey("d-1");
  }

  @Test
  void aConfirmationRefusedAfterTheEngineLentItsBlocksFailsTheLoadWithoutReadingAByte() {
    TransferParams params = prefill("p-1", List.of(1));
    // The lease ends on P (e.g. the client went away) before D's CONFIRM arrives.
    assertThat(producer.connector.scheduler().revoke("p-1", "client gone")).isTrue();

    failsLentLoadWithoutReading(params, () -> settle("d-1"), "refused the lease");
  }

  @Test
  void handshakenProducerThatNeverConfirmsFailsTheLoadItWasLentBlocksForWithoutReadingAByte() {
    TransferParams params = prefill("p-1", List.of(1));

    // The producer's engine never steps to answer the CONFIRM.
    failsLentLoadWithoutReading(
        params,
        () -> {
          consumer.drain();
          assertThat(consumer.failed).doesNotContainKey("d-1");
          clock.advance(HANDSHAKE_TIMEOUT.plus(Duration.ofSeconds(5)));
          consumer.drain();
        },
        "did not confirm");
  }

  /**
   * Loads {@code params} as request {@code d-1} into block 4 as an engine does in one step (the
   * CONFIRM goes out with the first answer, which is ready at once), runs {@code meanwhile}, and
   * checks that the load failed for {@code reason} naming block 4, with no READ posted and block 4
   * as it was.
   */
  private void failsLentLoadWithoutReading(
      TransferParams params, Runnable meanwhile, String reason) {
    byte[] before = consumer.block(4);
    int postsBefore = consumer.readsPosted();

    LoadMatch first =
        consumer
            .connector
            .scheduler()
            .matchRemote("d-1", Prompts.of(params.requestId(), params.tokens()), 0, params);
    consumer.connector.scheduler().afterAllocate("d-1", List.of(4));
    consumer.connector.worker().startLoad(consumer.connector.scheduler().buildStepMetadata());
    meanwhile.run();

    assertThat(first).isEqualTo(new LoadMatch.Ready(0, params.tokens()));
    assertThat(consumer.failed.get("d-1").reason()).contains(reason);
    assertThat(consumer.failed.get("d-1").localBlockIds()).containsExactly(4);
    assertThat(consumer.readsPosted()).isEqualTo(postsBefore);
    assertThat(consumer.block(4)).isEqualTo(before);
    assertThat(consumer.received).doesNotContain("d-1");
    assertThat(consumer.consumerPart().loadsInFlight()).isZero();
  }

  @Test
  void aRestartedConsumersEarlierStartHasTheLeasesItConfirmedRevokedAtOnce() {
    TransferParams confirmed = prefill("p-confirmed", List.of(1));
    assertThat(confirm(consumer, "d-1", confirmed, Prompts.of("p-confirmed", confirmed.tokens())))
        .isTrue();
    TransferParams unclaimed = prefill("p-unclaimed", List.of(2));
    // The consumer's process ends without a word to the producer: its releases never arrive.
    consumerTransport().invalidateRemote(producerTransport().agentName());
    consumer = restart(consumer);

    establishPeer();

    assertThat(producer.drain().sent).contains("p-confirmed").doesNotContain("p-unclaimed");
    assertThat(producer.producerPart().leasesEnded())
        .containsEntry(EndReason.REVOKED, 1L)
        .containsEntry(EndReason.EXPIRED, 0L);
    load("d-unclaimed", unclaimed, List.of(3));
    settle("d-unclaimed");
    assertThat(consumer.received).contains("d-unclaimed");
  }

  @Test
  void producerGoneFailsTheLoadsWaitingOnItAtOnce() {
    TransferParams params = prefill("p-1", List.of(1));
    assertThat(confirm(consumer, "d-1", params, Prompts.of("p-1", params.tokens()))).isTrue();
    consumer.connector.scheduler().afterAllocate("d-1", List.of(5));

    consumer.connector.peerGone(producer.connector.settings().engineId(), "its key expired");
    consumer.drain();

    assertThat(consumer.failed.get("d-1").reason()).contains("its key expired");
    assertThat(consumer.failed.get("d-1").localBlockIds()).containsExactly(5);
    assertThat(consumer.consumerPart().producers()).isEmpty();
  }

  @Test
  void unreachableProducerFailsTheLoad() {
    TransferParams honest = prefill("p-1", List.of(1));
    TransferParams elsewhere =
        altered(honest, "handshake_address", underTest.unreachableHandshakeAddress());

    load("d-1", elsewhere, List.of(1));
    settle("d-1");

    assertThat(consumer.failed.get("d-1").reason()).contains("handshake with");
  }

  @Test
  void silentProducerDoesNotStallTheStepAndFailsTheLoadAfterTheHandshakeTimeout() throws Exception {
    TransferParams honest = prefill("p-1", List.of(1));
    try (java.net.ServerSocket silent =
        new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      TransferParams elsewhere =
          altered(honest, "handshake_address", "tcp://127.0.0.1:" + silent.getLocalPort());

      TokenIds prompt = Prompts.of(elsewhere.requestId(), elsewhere.tokens());
      LoadMatch first = consumer.connector.scheduler().matchRemote("d-1", prompt, 0, elsewhere);
      consumer.drain();

      // The step came back while the handshake still waits for an answer that never comes, and
      // no block was committed to the load.
      assertThat(first).isEqualTo(LoadMatch.PENDING);
      assertThat(consumer.failed).doesNotContainKey("d-1");
      assertThat(consumer.consumerPart().loadsInFlight()).isEqualTo(1);
      assertThat(confirm(consumer, "d-1", elsewhere, prompt)).isFalse();
      assertThat(consumer.failed.get("d-1").reason()).contains("handshake with");
    }
  }

  @Test
  void consumerGoneIsForgottenByTheProducer() {
    establishPeer();

    producer.connector.peerGone(consumer.connector.settings().engineId(), "its key expired");

    assertThat(producer.producerPart().consumers()).isEmpty();
  }

  @Test
  void anAnswerThatCannotBeSentIsReportedAndItsConsumerForgotten() {
    List<String> failedTo = java.util.Collections.synchronizedList(new ArrayList<>());
    observer =
        new ConnectorObserver() {
          @Override
          public void notificationFailed(String toEngineId, String message) {
            failedTo.add(toEngineId);
          }
        };
    producer = node("prefill-observed", Role.PRODUCER, PRODUCER_LAYOUT);
    establishPeer();
    TransferParams params = prefill("p-1", List.of(1));
    String consumerId = consumer.connector.settings().engineId();
    sendFromConsumer(
        new ProtocolMessage.Heartbeat(
            consumerId, 0, List.of(new LeaseRef(params.requestId(), params.leaseToken()))));

    producerTransport().invalidateRemote(consumerTransport().agentName());
    awaitTrue(() -> producer.drain().producerPart().heartbeatsRenewed() == 1);

    assertThat(failedTo).containsExactly(consumerId);
    assertThat(producer.producerPart().consumers()).isEmpty();
  }
}
