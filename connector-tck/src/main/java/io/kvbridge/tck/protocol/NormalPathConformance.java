package io.kvbridge.tck.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.lease.EndReason;
import io.kvbridge.spi.FinishDecision;
import io.kvbridge.spi.FinishedRequest;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.tck.Prompts;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The normal path of the pull protocol: which blocks a finished request leases, how the consumer
 * reads them byte-exact from lists it prepared once, and how the lease then ends as read.
 */
public abstract class NormalPathConformance extends PullProtocolFixture {

  /** These tests, run against {@code connector}. */
  protected NormalPathConformance(ConnectorUnderTest connector) {
    super(connector);
  }

  @Test
  void consumerReceivesProducerBlocksByteExactAndLeaseEndsAsRead() {
    List<Integer> producerBlocks = List.of(3, 17, 5);
    Map<Integer, byte[]> written = producer.fill(producerBlocks);
    TransferParams params = prefill("p-1", producerBlocks);

    List<Integer> consumerBlocks = List.of(40, 2, 63);
    load("d-1", params, consumerBlocks);
    settle("d-1");

    assertThat(consumer.received).contains("d-1");
    for (int i = 0; i < producerBlocks.size(); i++) {
      assertThat(consumer.block(consumerBlocks.get(i)))
          .as("block %d", i)
          .isEqualTo(written.get(producerBlocks.get(i)));
    }
    awaitTrue(() -> producer.drain().sent.contains("p-1"));
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.READ, 1L);
    assertThat(producer.producerPart().liveLeases()).isZero();
    assertThat(consumer.consumerPart().readsCompleted()).isEqualTo(1);
    assertThat(consumer.consumerPart().bytesRead()).isEqualTo(3L * 1024);
  }

  @Test
  void requestIsReportedDoneSendingExactlyOnce() {
    TransferParams params = prefill("p-1", List.of(1));
    load("d-1", params, List.of(1));
    settle("d-1");
    awaitTrue(() -> producer.drain().sent.contains("p-1"));

    clock.advance(MAX_LIFETIME);
    producer.drain();

    assertThat(producer.sentCount.get("p-1")).isEqualTo(1);
  }

  @Test
  void abortedRequestIsFreedAtOnce() {
    FinishDecision decision =
        producer
            .connector
            .scheduler()
            .requestFinished(
                new FinishedRequest("p-1", List.of(1, 2), Prompts.of("p-1", 8), 8, true, true));

    assertThat(decision.delayFree()).isFalse();
    assertThat(decision.params()).isEmpty();
    assertThat(producer.producerPart().liveLeases()).isZero();
  }

  @Test
  void requestShorterThanABlockLeasesItsPartlyFilledBlock() {
    FinishDecision decision =
        producer
            .connector
            .scheduler()
            .requestFinished(
                new FinishedRequest("p-1", List.of(1), Prompts.of("p-1", 3), 3, false, true));

    assertThat(decision.delayFree()).isTrue();
    assertThat(decision.params().orElseThrow().blockIds()).containsExactly(1);
    assertThat(decision.params().orElseThrow().tokens()).isEqualTo(3);
  }

  @Test
  void requestWithNoComputedTokenIsFreedAtOnce() {
    FinishDecision decision =
        producer
            .connector
            .scheduler()
            .requestFinished(
                new FinishedRequest("p-1", List.of(1), Prompts.of("p-1", 3), 0, false, true));

    assertThat(decision.delayFree()).isFalse();
  }

  @Test
  void requestNobodyWillReadIsFreedAtOnce() {
    FinishDecision decision =
        producer
            .connector
            .scheduler()
            .requestFinished(
                new FinishedRequest("p-1", List.of(1, 2), Prompts.of("p-1", 8), 8, false, false));

    assertThat(decision.delayFree()).isFalse();
  }

  @Test
  void everyBlockHoldingAComputedTokenIsLeasedAndNoMore() {
    FinishDecision decision =
        producer
            .connector
            .scheduler()
            .requestFinished(
                new FinishedRequest(
                    "p-1", List.of(4, 5, 6, 7), Prompts.of("p-1", 10), 10, false, true));

    assertThat(decision.delayFree()).isTrue();
    assertThat(decision.params().orElseThrow().blockIds()).containsExactly(4, 5, 6);
    assertThat(decision.params().orElseThrow().tokens()).isEqualTo(10);
  }

  @Test
  void wholeBlocksAreReadByIndexFromListsPreparedOnce() {
    Map<Integer, byte[]> written = producer.fill(List.of(3, 4, 9));
    load("d-1", prefill("p-1", List.of(3, 4)), List.of(10, 11));
    settle("d-1");
    load("d-2", prefill("p-2", List.of(9)), List.of(30));
    settle("d-2");

    assertThat(consumer.received).contains("d-1", "d-2");
    assertThat(consumer.block(10)).isEqualTo(written.get(3));
    assertThat(consumer.block(11)).isEqualTo(written.get(4));
    assertThat(consumer.block(30)).isEqualTo(written.get(9));
    assertThat(consumer.count(r -> r.preparedPosts.get())).isEqualTo(2);
    assertThat(consumer.count(r -> r.describedPosts.get())).isZero();
    assertThat(consumer.count(r -> r.localListsPrepared.get())).isEqualTo(1);
    assertThat(consumer.count(r -> r.remoteListsPrepared.get())).isEqualTo(1);
  }

  @Test
  void aPartlyFilledLastBlockIsReadPieceByPieceBesideTheWholeBlocks() {
    int tokens = PRODUCER_LAYOUT.tokensPerBlock() + 1;
    Map<Integer, byte[]> written = producer.fill(List.of(6, 8));
    FinishDecision decision =
        producer
            .connector
            .scheduler()
            .requestFinished(
                new FinishedRequest(
                    "p-1", List.of(6, 8), Prompts.of("p-1", tokens), tokens, false, true));
    load("d-1", decision.params().orElseThrow(), List.of(12, 13));
    settle("d-1");

    assertThat(consumer.received).contains("d-1");
    assertThat(consumer.block(12)).isEqualTo(written.get(6));
    int usedBytes = CONSUMER_LAYOUT.blockBytes() / CONSUMER_LAYOUT.tokensPerBlock();
    assertThat(java.util.Arrays.copyOf(consumer.block(13), usedBytes))
        .isEqualTo(java.util.Arrays.copyOf(written.get(8), usedBytes));
    assertThat(consumer.count(r -> r.preparedPosts.get())).isEqualTo(1);
    assertThat(consumer.count(r -> r.describedPosts.get())).isEqualTo(1);
    assertThat(consumer.consumerPart().bytesRead())
        .isEqualTo((long) CONSUMER_LAYOUT.blockBytes() + usedBytes);
  }

  @Test
  void aRestartedProducersBlocksAreReadFromListsPreparedAgain() {
    establishPeer();
    int before = consumer.count(r -> r.listsReleased.get());

    producer = restart(producer);
    Map<Integer, byte[]> written = producer.fill(List.of(2));
    load("d-fresh", prefill("p-fresh", List.of(2)), List.of(20));
    settle("d-fresh");

    assertThat(consumer.received).contains("d-fresh");
    assertThat(consumer.block(20)).isEqualTo(written.get(2));
    assertThat(consumer.count(r -> r.remoteListsPrepared.get())).isEqualTo(2);
    assertThat(consumer.count(r -> r.listsReleased.get())).isEqualTo(before + 1);
    assertThat(consumer.count(r -> r.preparedPosts.get())).isEqualTo(2);
  }

  @Test
  void closingTheConsumerReleasesItsPreparedLists() {
    establishPeer();

    consumer.connector.close();

    assertThat(consumer.count(r -> r.listsReleased.get()))
        .isEqualTo(consumer.count(r -> r.localListsPrepared.get() + r.remoteListsPrepared.get()))
        .isPositive();
  }

  @Test
  void grantedLeasesAreCounted() {
    prefill("p-1", List.of(1));
    prefill("p-2", List.of(2));

    assertThat(producer.producerPart().leasesGranted()).isEqualTo(2);
  }

  @Test
  void aLoadFromAHandshakenProducerIsAnsweredReadyAtOnceAndReadOnlyOnceConfirmed() {
    establishPeer();
    Map<Integer, byte[]> written = producer.fill(List.of(1));
    TransferParams params = prefill("p-1", List.of(1));
    TokenIds prompt = Prompts.of("p-1", params.tokens());
    int producerHeard = producer.count(r -> r.notificationsReceived.get());
    int consumerHeard = consumer.count(r -> r.notificationsReceived.get());
    int postsBefore = consumer.readsPosted();

    // The CONFIRM goes out with the first answer, so the engine allocates in this step.
    assertThat(consumer.connector.scheduler().matchRemote("d-1", prompt, 0, params))
        .isEqualTo(new LoadMatch.Ready(0, params.tokens()));
    consumer.connector.scheduler().afterAllocate("d-1", List.of(4));
    consumer.connector.worker().startLoad(consumer.connector.scheduler().buildStepMetadata());
    assertThat(consumer.readsPosted())
        .as("no READ before the producer confirmed the lease")
        .isEqualTo(postsBefore);

    // Only P steps until the confirmation arrives (a transport may take a while to deliver it):
    // D must have sent it from matchRemote, not from a later step of its own. P answers in the
    // step that hears it, and D's next step that hears the answer posts the read.
    awaitTrue(() -> producer.drain().count(r -> r.notificationsReceived.get()) > producerHeard);
    awaitTrue(() -> consumer.drain().count(r -> r.notificationsReceived.get()) > consumerHeard);
    assertThat(consumer.readsPosted()).isGreaterThan(postsBefore);

    settle("d-1");
    assertThat(consumer.received).contains("d-1");
    assertThat(consumer.block(4)).isEqualTo(written.get(1));
  }

  @Test
  void aPromptHeldWhollyLocallyReleasesTheLeaseWithoutReading() {
    TransferParams params = prefill("p-1", List.of(1, 2));

    LoadMatch match =
        consumer
            .connector
            .scheduler()
            .matchRemote("d-1", Prompts.of("p-1", params.tokens()), params.tokens(), params);

    assertThat(match).isEqualTo(new LoadMatch.Ready(params.tokens(), 0));
    awaitTrue(
        () -> {
          consumer.drain();
          return producer.drain().producerPart().liveLeases() == 0;
        });
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.RELEASED, 1L);
    assertThat(consumer.consumerPart().readsCompleted()).isZero();
  }
}
