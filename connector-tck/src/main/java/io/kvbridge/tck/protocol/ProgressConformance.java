package io.kvbridge.tck.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.lease.EndReason;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.tck.Prompts;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * What the connector's progress thread does between the engine's steps: P answers CONFIRM,
 * COMPLETION and heartbeats, and ends expired leases, as they arrive or fall due; D posts the read
 * once confirmed, sends its COMPLETION and takes P's ACK; neither engine steps in between, and what
 * ended is reported by each engine's next {@code getFinished}. A load costs the consumer's engine
 * one step to start it and one to learn it was received.
 */
public abstract class ProgressConformance extends PullProtocolFixture {

  /** The requests whose loads P acknowledged, as D's observer heard it (no step needed). */
  private final Set<String> acknowledged = ConcurrentHashMap.newKeySet();

  protected ProgressConformance(ConnectorUnderTest connector) {
    super(connector);
    progressInterval = Duration.ofNanos(200_000);
    observer =
        new ConnectorObserver() {
          @Override
          public void transferCompleted(String requestId, long bytes, long nanos) {
            acknowledged.add(requestId);
          }
        };
  }

  @Test
  void aLoadIsConfirmedReadAndAcknowledgedWithoutEitherEngineSteppingInBetween() {
    establishPeer();
    Map<Integer, byte[]> written = producer.fill(List.of(5, 6));
    TransferParams params = prefill("p-1", List.of(5, 6));
    TokenIds prompt = Prompts.of("p-1", params.tokens());

    // D's one step: answered ready at once, allocates, starts the load.
    LoadMatch match = consumer.connector.scheduler().matchRemote("d-1", prompt, 0, params);
    assertThat(match).isEqualTo(new LoadMatch.Ready(0, params.tokens()));
    consumer.connector.scheduler().afterAllocate("d-1", List.of(9, 10));
    consumer.connector.worker().startLoad(consumer.connector.scheduler().buildStepMetadata());

    // No step of either engine: CONFIRM, CONFIRMED, the READ, COMPLETION and ACK all happen on the
    // progress threads, and P's lease ends READ.
    awaitTrue(
        () ->
            acknowledged.contains("d-1")
                && producer.producerPart().leasesEnded().get(EndReason.READ) == 2L);

    // D's next step reports the request received; P's reports the blocks done.
    assertThat(consumer.drain().received).contains("d-1");
    assertThat(producer.drain().sent).contains("p-1");
    assertThat(consumer.block(9)).isEqualTo(written.get(5));
    assertThat(consumer.block(10)).isEqualTo(written.get(6));
  }

  @Test
  void heartbeatsAreSentAndAnsweredWithoutEitherEngineStepping() {
    establishPeer();
    TransferParams params = prefill("p-1", List.of(1));
    TokenIds prompt = Prompts.of("p-1", params.tokens());
    assertThat(consumer.connector.scheduler().matchRemote("d-1", prompt, 0, params))
        .isInstanceOf(LoadMatch.Ready.class);
    consumer.connector.scheduler().afterAllocate("d-1", List.of(3));
    // The engine has lent its blocks but takes its time to start the read: the lease must live.
    awaitTrue(() -> acknowledgedConfirmation("d-1"));
    long renewedBefore = producer.producerPart().heartbeatsRenewed();

    clock.advance(Duration.ofSeconds(6)); // past the heartbeat interval of 5 s

    awaitTrue(
        () ->
            producer.producerPart().heartbeatsRenewed() > renewedBefore
                && consumer.consumerPart().renewalsConfirmed() >= 1);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
  }

  @Test
  void anExpiredLeaseEndsWithoutAStepOrASweep() {
    prefill("p-1", List.of(1));
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);

    clock.advance(LEASE.plusSeconds(1));

    awaitTrue(() -> producer.producerPart().liveLeases() == 0);
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.EXPIRED, 1L);
    assertThat(producer.drain().sent).containsExactly("p-1");
  }

  @Test
  void closingAConnectorStopsItsProgressThread() {
    String name = "kvbridge-progress-" + consumer.connector.settings().engineId();
    assertThat(threadNamed(name)).as("a started connector runs its progress thread").isTrue();

    consumer.connector.close();

    awaitTrue(() -> !threadNamed(name));
  }

  @Test
  void aConnectorWithoutAProgressThreadRunsNone() {
    progressInterval = Duration.ZERO;
    Node stepped = node("decode-stepped", Role.CONSUMER, CONSUMER_LAYOUT);

    assertThat(threadNamed("kvbridge-progress-" + stepped.connector.settings().engineId()))
        .isFalse();
  }

  private boolean acknowledgedConfirmation(String requestId) {
    return consumer.confirmed.contains(requestId);
  }

  private static boolean threadNamed(String name) {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.getName().equals(name) && t.isAlive());
  }
}
