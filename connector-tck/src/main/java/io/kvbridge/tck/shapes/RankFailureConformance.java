package io.kvbridge.tck.shapes;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.spi.LoadFailure;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.Role;
import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.tck.faults.Faults;
import org.junit.jupiter.api.Test;

/**
 * A rank that fails its read fails the whole load, naming only the blocks it may have written, and
 * leaves the producer's lease live.
 */
public abstract class RankFailureConformance extends ShapeTranslationFixture {

  /** These tests, run against {@code connector}. */
  protected RankFailureConformance(ConnectorUnderTest connector) {
    super(connector);
  }

  /**
   * When one consumer rank's read fails, the load fails as a whole with every block it was lent
   * (the engine recomputes them or fails the request, by its policy); no completion is sent and the
   * producer's lease stays live.
   */
  @Test
  void oneRankFailingItsReadFailsTheWholeLoadWithItsBlocksAndTheLeaseStaysLive() {
    KvLayout.MemoryOrder order = KvLayout.MemoryOrder.HEAD_MAJOR;
    Faults faults = new Faults(7);
    Engine producer = start("prefill", Role.PRODUCER, model(8, 32, order), 2);
    Engine consumer =
        start(
            "decode",
            Role.CONSUMER,
            model(8, 64, order),
            2,
            transport ->
                transport.agentName().endsWith("-rank1") ? faults.decorate(transport) : transport);
    faults.failNextReads(1, "rank 1's link went down");

    Transfer t = transfer(producer, consumer, "r-1", 20, 0);

    LoadFailure failure = consumer.failed.get("r-1");
    assertThat(failure).isNotNull();
    assertThat(failure.reason()).contains("rank 1's link went down");
    assertThat(failure.localBlockIds()).isEqualTo(t.consumerBlocks());
    assertThat(consumer.received).doesNotContain("r-1");
    assertThat(producer.connector.status().producer().orElseThrow().liveLeases()).isEqualTo(1);
    assertThat(producer.step().sent).doesNotContain("r-1");
  }

  /**
   * A failed load after a local prefix hit names only the blocks it may have written: those below
   * its first token were never a destination and keep what the engine put there.
   */
  @Test
  void aFailedLoadAfterAPrefixHitNamesOnlyTheBlocksItMayHaveWritten() {
    KvLayout.MemoryOrder order = KvLayout.MemoryOrder.HEAD_MAJOR;
    Faults faults = new Faults(11);
    Engine producer = start("prefill", Role.PRODUCER, model(8, 32, order), 2);
    Engine consumer =
        start(
            "decode",
            Role.CONSUMER,
            model(8, 64, order),
            2,
            transport ->
                transport.agentName().endsWith("-rank1") ? faults.decorate(transport) : transport);
    faults.failNextReads(1, "rank 1's link went down");

    Transfer t = transfer(producer, consumer, "r-1", 35, 16);

    assertThat(t.match()).isEqualTo(new LoadMatch.Ready(16, 19));
    assertThat(consumer.failed.get("r-1").localBlockIds())
        .isEqualTo(t.consumerBlocks().subList(2, t.consumerBlocks().size()));
    consumer.assertUntouched(t, 0, 16);
  }
}
