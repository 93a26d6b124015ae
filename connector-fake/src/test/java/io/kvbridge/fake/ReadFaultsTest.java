package io.kvbridge.fake;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.tck.faults.Faults;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferStatus;
import java.util.Arrays;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The read faults of the fault decorator, over fake agents that copy inside {@code post}: a READ
 * fails or stalls before it reaches the fake.
 */
class ReadFaultsTest {

  private final Faults faults = new Faults(7);
  private final TwoAgents agents = TwoAgents.synchronous(faults);

  @AfterEach
  void close() {
    agents.close();
  }

  @Test
  void failedReadReportsTheReasonAndMovesNoByte() {
    faults.failNextReads(1, "link down");

    TransferHandle handle = agents.read(4);

    assertThat(agents.decode.status(handle)).isEqualTo(new TransferStatus.Failed("link down"));
    assertThat(agents.decodeBytes()).containsOnly(0);
  }

  @Test
  void failingReadsStopsAfterItsCount() {
    faults.failNextReads(1, "link down");
    agents.read(1);

    TransferHandle second = agents.read(1);

    assertThat(agents.decode.status(second)).isEqualTo(TransferStatus.DONE);
  }

  @Test
  void suspendedRulesLetReadsPassAndKeepTheirCountsForLater() {
    faults.failNextReads(1, "link down");
    faults.suspendRules();
    TransferHandle passed = agents.read(1);
    faults.resumeRules();

    TransferHandle failed = agents.read(1);

    assertThat(agents.decode.status(passed)).isEqualTo(TransferStatus.DONE);
    assertThat(agents.decode.status(failed)).isEqualTo(new TransferStatus.Failed("link down"));
  }

  @Test
  void failingReadsSparesWrites() {
    faults.failNextReads(1, "link down");

    TransferHandle write = agents.write(1);

    assertThat(agents.decode.status(write)).isEqualTo(TransferStatus.DONE);
  }

  @Test
  void failedReadSendsNoAttachedNotification() {
    faults.failNextReads(1, "link down");

    agents.read(1, Optional.of(new byte[] {1}));

    assertThat(agents.prefill.drainNotifications()).isEmpty();
  }

  @Test
  void readRuleAimedAtOneLinkSparesReadsOnOthersAndFiresOnItsOwn() {
    faults.failNextReadsBetween("prefill", "decode", 1, "rank 1's link down");

    TransferHandle other = agents.read(1);
    TransferHandle aimed = agents.readByPrefill(1);

    assertThat(agents.decode.status(other)).isEqualTo(TransferStatus.DONE);
    assertThat(agents.prefill.status(aimed))
        .isEqualTo(new TransferStatus.Failed("rank 1's link down"));
  }

  @Test
  void ruleAimedAtAnotherLinkDoesNotShadowALaterRuleThatMatches() {
    faults.stallNextReadsBetween("prefill", "decode", 1);
    faults.failNextReads(1, "link down");

    TransferHandle read = agents.read(1);

    assertThat(agents.decode.status(read)).isEqualTo(new TransferStatus.Failed("link down"));
    assertThat(faults.stalledReads()).isZero();
  }

  @Test
  void stallAimedAtOneLinkHoldsOnlyTheReadOnThatLink() {
    faults.stallNextReadsBetween("decode", "prefill", 1);

    TransferHandle aimed = agents.read(1);
    TransferHandle other = agents.readByPrefill(1);

    assertThat(agents.decode.status(aimed)).isEqualTo(TransferStatus.IN_PROGRESS);
    assertThat(agents.prefill.status(other)).isEqualTo(TransferStatus.DONE);
    assertThat(faults.stalledReads()).isEqualTo(1);
  }

  @Test
  void stalledReadStaysInProgressAndMovesNoByte() {
    faults.stallNextReads(1);

    TransferHandle handle = agents.read(4);

    assertThat(agents.decode.status(handle)).isEqualTo(TransferStatus.IN_PROGRESS);
    assertThat(agents.decodeBytes()).containsOnly(0);
    assertThat(faults.stalledReads()).isEqualTo(1);
  }

  @Test
  void unstalledReadCompletesByteExact() {
    faults.stallNextReads(1);
    TransferHandle handle = agents.read(4);

    assertThat(faults.unstallReads()).isEqualTo(1);

    assertThat(agents.decode.status(handle)).isEqualTo(TransferStatus.DONE);
    assertThat(Arrays.copyOf(agents.decodeBytes(), 4 * TwoAgents.BLOCK))
        .isEqualTo(Arrays.copyOf(agents.prefillData, 4 * TwoAgents.BLOCK));
    assertThat(faults.stalledReads()).isZero();
  }

  @Test
  void unstalledReadSendsItsAttachedNotificationOnlyThen() {
    faults.stallNextReads(1);
    agents.read(1, Optional.of(new byte[] {3}));
    assertThat(agents.prefill.drainNotifications()).isEmpty();

    faults.unstallReads();

    assertThat(agents.prefill.drainNotifications()).hasSize(1);
  }

  @Test
  void releasedStalledReadNeverWritesAByte() {
    faults.stallNextReads(1);
    TransferHandle handle = agents.read(4);

    agents.decode.release(handle);

    assertThat(faults.stalledReads()).isZero();
    assertThat(faults.unstallReads()).isZero();
    assertThat(agents.decodeBytes()).containsOnly(0);
  }

  @Test
  void stalledReadFailsWhenItsPeerIsKilled() {
    faults.stallNextReads(1);
    TransferHandle handle = agents.read(4);

    faults.kill("prefill");
    faults.unstallReads();

    assertThat(agents.decode.status(handle)).isInstanceOf(TransferStatus.Failed.class);
    assertThat(agents.decodeBytes()).containsOnly(0);
  }
}
