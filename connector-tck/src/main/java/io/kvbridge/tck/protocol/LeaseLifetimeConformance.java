package io.kvbridge.tck.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.lease.EndReason;
import io.kvbridge.lease.LeaseToken;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.tck.Messages;
import io.kvbridge.tck.Prompts;
import io.kvbridge.wire.LeaseRef;
import io.kvbridge.wire.ProtocolMessage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * How a lease lives and ends other than by a read: expiry, revocation, heartbeats and releases, and
 * that nobody ever decodes from blocks the producer freed.
 */
public abstract class LeaseLifetimeConformance extends PullProtocolFixture {

  /** These tests, run against {@code connector}. */
  protected LeaseLifetimeConformance(ConnectorUnderTest connector) {
    super(connector);
  }

  @Test
  void leaseExpiresWhenTheConsumerNeverReads() {
    prefill("p-1", List.of(1, 2));

    clock.advance(LEASE);

    assertThat(producer.drain().sent).contains("p-1");
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.EXPIRED, 1L);
  }

  @Test
  void scheduledSweepEndsAnExpiredLeaseWithoutAnEngineStep() {
    prefill("p-1", List.of(1));
    clock.advance(LEASE);

    producer.connector.worker().sweep();

    assertThat(producer.producerPart().liveLeases()).isZero();
    assertThat(producer.drain().sent).containsExactly("p-1");
  }

  @Test
  void revokedLeaseIsReportedDoneSending() {
    prefill("p-1", List.of(1));

    assertThat(producer.connector.scheduler().revoke("p-1", "client went away")).isTrue();

    assertThat(producer.drain().sent).containsExactly("p-1");
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.REVOKED, 1L);
  }

  @Test
  void closingTheProducerRevokesEveryLiveLease() {
    prefill("p-1", List.of(1));
    prefill("p-2", List.of(2));

    producer.connector.close();

    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.REVOKED, 2L);
  }

  @Test
  void closingTheConsumerReleasesTheLeasesItConfirmedAtOnce() {
    TransferParams confirmedOnly = prefill("p-1", List.of(1));
    TransferParams lent = prefill("p-2", List.of(2));
    assertThat(confirm(consumer, "d-1", confirmedOnly, Prompts.of("p-1", 4))).isTrue();
    assertThat(confirm(consumer, "d-2", lent, Prompts.of("p-2", 4))).isTrue();
    consumer.connector.scheduler().afterAllocate("d-2", List.of(7));

    consumer.connector.close();

    awaitTrue(() -> producer.drain().sent.containsAll(List.of("p-1", "p-2")));
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.RELEASED, 2L);
    assertThat(producer.producerPart().liveLeases()).isZero();
  }

  @Test
  void consumerDoesNotStartAReadWhoseLeaseEndsInsideTheSafetyMargin() {
    TransferParams params = prefill("p-1", List.of(1));
    assertThat(confirm(consumer, "d-1", params, Prompts.of("p-1", params.tokens()))).isTrue();
    consumer.connector.scheduler().afterAllocate("d-1", List.of(1));
    // The engine lent its blocks, then took until just before the lease's end to start the read.
    clock.advance(LEASE.minus(SAFETY_MARGIN.dividedBy(2)));

    consumer.connector.worker().startLoad(consumer.connector.scheduler().buildStepMetadata());
    settle("d-1");

    assertThat(consumer.failed).containsKey("d-1");
    assertThat(consumer.failed.get("d-1").reason()).contains("safety margin");
    assertThat(consumer.consumerPart().readsCompleted()).isZero();
  }

  @Test
  void readFinishedAfterTheLeaseExpiredIsRefusedAndNeverReportedReceived() {
    TransferParams params = prefill("p-1", List.of(1, 2));
    load("d-1", params, List.of(1, 2));
    // The lease expires on P while the read is in flight or awaiting validation.
    clock.advance(LEASE);
    producer.connector.worker().sweep();

    settle("d-1");

    assertThat(consumer.received).doesNotContain("d-1");
    assertThat(consumer.failed).containsKey("d-1");
    assertThat(producer.producerPart().leasesEnded())
        .containsEntry(EndReason.EXPIRED, 1L)
        .containsEntry(EndReason.READ, 0L);
  }

  @Test
  void heartbeatKeepsAnUnreadLeaseAlivePastItsFirstDeadline() {
    establishPeer();
    TransferParams params = prefill("p-2", List.of(2));
    assertThat(confirm(consumer, "d-2", params, Prompts.of(params.requestId(), params.tokens())))
        .isTrue();
    consumer.connector.scheduler().afterAllocate("d-2", List.of(2));

    clock.advance(Duration.ofSeconds(20));
    consumer.connector.worker().sweep(); // sends the heartbeats that are due
    awaitTrue(
        () -> {
          producer.drain();
          return producer.producerPart().heartbeatsRenewed() >= 1;
        });
    awaitTrue(
        () -> {
          consumer.drain();
          return consumer.consumerPart().renewalsConfirmed() >= 1;
        });
    clock.advance(Duration.ofSeconds(20));
    producer.connector.worker().sweep();

    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
    consumer.connector.worker().startLoad(consumer.connector.scheduler().buildStepMetadata());
    settle("d-2");
    assertThat(consumer.received).contains("d-2");
  }

  @Test
  void consumerGoneRevokesTheLeasesOnlyItWasKeepingAlive() {
    TransferParams confirmed = prefill("p-1", List.of(1));
    assertThat(confirm(consumer, "d-1", confirmed, Prompts.of("p-1", confirmed.tokens()))).isTrue();
    prefill("p-unclaimed", List.of(2));

    producer.connector.peerGone(consumer.connector.settings().engineId(), "its key expired");

    assertThat(producer.drain().sent).containsExactly("p-1");
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.REVOKED, 1L);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
  }

  @Test
  void renewalNobodyAskedForIsCountedAndMovesNoDeadline() {
    establishPeer();

    producerTransport()
        .notify(
            consumerTransport().agentName(),
            Messages.renewed(new LeaseRef("p-9", LeaseToken.random().value()), Long.MAX_VALUE));

    awaitRejected(consumer, RejectedInput.UNEXPECTED_REPLY);
    assertThat(consumer.consumerPart().renewalsConfirmed()).isZero();
  }

  @Test
  void heartbeatWithAWrongTokenRenewsNothingAndIsCounted() {
    establishPeer();
    prefill("p-2", List.of(2));

    sendFromConsumer(
        new ProtocolMessage.Heartbeat(
            consumer.connector.settings().engineId(),
            0,
            List.of(new LeaseRef("p-2", LeaseToken.random().value()))));

    awaitRejected(producer, RejectedInput.WRONG_TOKEN);
    assertThat(producer.producerPart().heartbeatsIgnored()).isEqualTo(1);
    assertThat(producer.producerPart().heartbeatsRenewed()).isZero();
  }

  @Test
  void consumerGoneRevokesALeaseOnlyItsHeartbeatsKeptAlive() {
    establishPeer();
    TransferParams params = prefill("p-1", List.of(1));
    sendFromConsumer(
        new ProtocolMessage.Heartbeat(
            consumer.connector.settings().engineId(),
            0,
            List.of(new LeaseRef(params.requestId(), params.leaseToken()))));
    awaitTrue(() -> producer.drain().producerPart().heartbeatsRenewed() == 1);

    producer.connector.peerGone(consumer.connector.settings().engineId(), "its key expired");

    assertThat(producer.drain().sent).contains("p-1");
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.REVOKED, 1L);
  }

  @Test
  void releaseWithAWrongTokenFreesNothingAndIsCounted() {
    establishPeer();
    prefill("p-2", List.of(2));

    sendFromConsumer(
        new ProtocolMessage.Release(
            new LeaseRef("p-2", LeaseToken.random().value()),
            consumer.connector.settings().engineId(),
            "no longer needed"));

    awaitRejected(producer, RejectedInput.WRONG_TOKEN);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
    assertThat(producer.drain().sent).doesNotContain("p-2");
  }

  @Test
  void revokingALeaseThatIsNotLiveChangesNothing() {
    prefill("p-1", List.of(1));

    assertThat(producer.connector.scheduler().revoke("ghost", "client went away")).isFalse();

    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
  }

  @Test
  void aRenewalIsReportedToTheObserver() {
    List<String> renewed = java.util.Collections.synchronizedList(new ArrayList<>());
    observer =
        new ConnectorObserver() {
          @Override
          public void renewed(io.kvbridge.lease.Lease lease) {
            renewed.add(lease.requestId());
          }
        };
    producer = node("prefill-observed", Role.PRODUCER, PRODUCER_LAYOUT);
    establishPeer();
    TransferParams params = prefill("p-1", List.of(1));
    // A renewal moves the deadline only once time has passed since the grant.
    clock.advance(Duration.ofSeconds(1));

    sendFromConsumer(
        new ProtocolMessage.Heartbeat(
            consumer.connector.settings().engineId(),
            0,
            List.of(new LeaseRef(params.requestId(), params.leaseToken()))));
    awaitTrue(() -> producer.drain().producerPart().heartbeatsRenewed() == 1);

    assertThat(renewed).containsExactly("p-1");
  }

  @Test
  void soonestExpiryIsTheTimeLeftToTheEarliestLiveLease() {
    assertThat(producer.producerPart().soonestExpiry()).isEmpty();
    prefill("p-1", List.of(1));
    clock.advance(Duration.ofSeconds(10));
    prefill("p-2", List.of(2));

    assertThat(producer.producerPart().soonestExpiry()).contains(LEASE.minusSeconds(10));
    assertThat(producer.producerPart().liveLeases()).isEqualTo(2);
  }
}
