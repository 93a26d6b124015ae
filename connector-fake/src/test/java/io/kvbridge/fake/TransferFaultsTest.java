package io.kvbridge.fake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.TransportException;
import java.util.Arrays;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class TransferFaultsTest {

  private final TwoAgents agents = TwoAgents.synchronous();
  private final FakeFaults faults = agents.faults();

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
  void failTransfersHitsOnlyThoseThePredicateMatches() {
    faults.failTransfers(FakeFaults.UNLIMITED, TransferAttempt.readsFrom("elsewhere"), "no");

    assertThat(agents.decode.status(agents.read(1))).isEqualTo(TransferStatus.DONE);
  }

  @Test
  void refusedPostsDoNotUseUpAFaultsCount() {
    faults.failNextReads(1, "link down");
    agents.decode.invalidateRemote("prefill");
    assertThatThrownBy(() -> agents.read(1)).isInstanceOf(TransportException.class);
    agents.decode.loadRemoteMetadata(agents.prefill.localMetadata());

    assertThat(agents.decode.status(agents.read(1))).isInstanceOf(TransferStatus.Failed.class);
  }

  @Test
  void stalledReadStaysInProgressAndMovesNoByte() {
    faults.stallNextReads(1);

    TransferHandle handle = agents.read(4);

    assertThat(agents.decode.status(handle)).isEqualTo(TransferStatus.IN_PROGRESS);
    assertThat(agents.decodeBytes()).containsOnly(0);
    assertThat(faults.stalledTransfers()).isEqualTo(1);
  }

  @Test
  void unstalledReadCompletesByteExact() {
    faults.stallNextReads(1);
    TransferHandle handle = agents.read(4);

    assertThat(faults.unstallTransfers()).isEqualTo(1);

    assertThat(agents.decode.status(handle)).isEqualTo(TransferStatus.DONE);
    assertThat(Arrays.copyOf(agents.decodeBytes(), 4 * TwoAgents.BLOCK))
        .isEqualTo(Arrays.copyOf(agents.prefillData, 4 * TwoAgents.BLOCK));
    assertThat(faults.stalledTransfers()).isZero();
  }

  @Test
  void unstalledReadSendsItsAttachedNotificationOnlyThen() {
    faults.stallNextReads(1);
    agents.read(1, Optional.of(new byte[] {3}));
    assertThat(agents.prefill.drainNotifications()).isEmpty();

    faults.unstallTransfers();

    assertThat(agents.prefill.drainNotifications()).hasSize(1);
  }

  @Test
  void releasedStalledReadNeverWritesAByte() {
    faults.stallNextReads(1);
    TransferHandle handle = agents.read(4);

    agents.decode.release(handle);

    assertThat(faults.stalledTransfers()).isZero();
    assertThat(faults.unstallTransfers()).isZero();
    assertThat(agents.decodeBytes()).containsOnly(0);
  }

  @Test
  void stalledReadFailsWhenItsPeerIsKilled() {
    faults.stallNextReads(1);
    TransferHandle handle = agents.read(4);

    faults.kill("prefill");
    faults.unstallTransfers();

    assertThat(agents.decode.status(handle)).isInstanceOf(TransferStatus.Failed.class);
    assertThat(agents.decodeBytes()).containsOnly(0);
  }
}
