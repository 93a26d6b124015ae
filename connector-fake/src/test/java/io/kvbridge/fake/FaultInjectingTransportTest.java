package io.kvbridge.fake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.tck.faults.FaultInjectingTransport;
import io.kvbridge.tck.faults.Faults;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.TransportException;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The transport-agnostic fault decorator, over fake agents that copy inside {@code post}. */
class FaultInjectingTransportTest {

  private final TwoAgents agents = TwoAgents.synchronous();
  private final Faults faults = new Faults(7);
  private final FaultInjectingTransport decode = faults.decorate(agents.decode);
  private final FaultInjectingTransport prefill = faults.decorate(agents.prefill);

  @AfterEach
  void close() {
    agents.close();
  }

  @Test
  void failedReadReportsTheReasonAndMovesNoByte() {
    faults.failNextReads(1, "link down");

    TransferHandle handle = read(Optional.of(new byte[] {1}));

    assertThat(decode.status(handle)).isEqualTo(new TransferStatus.Failed("link down"));
    assertThat(agents.decodeBytes()).containsOnly(0);
    assertThat(prefill.drainNotifications()).isEmpty();
  }

  @Test
  void stalledReadMovesBytesOnlyOnceUnstalled() {
    faults.stallNextReads(1);
    TransferHandle handle = read(Optional.empty());
    assertThat(decode.status(handle)).isEqualTo(TransferStatus.IN_PROGRESS);
    assertThat(agents.decodeBytes()).containsOnly(0);

    assertThat(faults.unstallReads()).isEqualTo(1);

    assertThat(decode.status(handle)).isEqualTo(TransferStatus.DONE);
    assertThat(agents.decodeBytes()).isEqualTo(agents.prefillData);
  }

  @Test
  void releasingAStalledReadCancelsIt() {
    faults.stallNextReads(1);
    decode.release(read(Optional.empty()));

    assertThat(faults.unstallReads()).isZero();
    assertThat(agents.decodeBytes()).containsOnly(0);
  }

  @Test
  void droppedNotificationNeverArrives() {
    faults.dropNextNotifications(1);
    decode.notify("prefill", new byte[] {1});
    decode.notify("prefill", new byte[] {2});

    assertThat(TwoAgents.firstBytes(prefill.drainNotifications())).containsExactly((byte) 2);
    assertThat(faults.droppedNotifications()).isEqualTo(1);
  }

  @Test
  void notificationAttachedToATransferIsSubjectToTheRules() {
    faults.dropNextNotifications(1);

    decode.status(read(Optional.of(new byte[] {1})));

    assertThat(prefill.drainNotifications()).isEmpty();
  }

  @Test
  void heldNotificationArrivesOnlyOnceReleased() {
    faults.holdNextNotifications(1);
    decode.notify("prefill", new byte[] {1});
    assertThat(prefill.drainNotifications()).isEmpty();

    assertThat(faults.releaseHeldNotifications()).isEqualTo(1);

    assertThat(TwoAgents.firstBytes(prefill.drainNotifications())).containsExactly((byte) 1);
  }

  @Test
  void delayedNotificationIsWithheldFromItsReceiversNextDrains() {
    faults.delayNextNotifications(1, 2);
    decode.notify("prefill", new byte[] {1});

    assertThat(prefill.drainNotifications()).isEmpty();
    assertThat(prefill.drainNotifications()).isEmpty();
    assertThat(TwoAgents.firstBytes(prefill.drainNotifications())).containsExactly((byte) 1);
  }

  @Test
  void duplicatedNotificationArrivesTwice() {
    faults.duplicateNextNotifications(1);
    decode.notify("prefill", new byte[] {1});

    assertThat(TwoAgents.firstBytes(prefill.drainNotifications()))
        .containsExactly((byte) 1, (byte) 1);
  }

  @Test
  void killedAgentFailsEveryCall() {
    faults.kill("decode");

    assertThatThrownBy(() -> decode.drainNotifications())
        .isInstanceOf(TransportException.class)
        .hasMessageContaining("'decode' was killed");
    assertThatThrownBy(() -> read(Optional.empty())).isInstanceOf(TransportException.class);
  }

  @Test
  void notificationsToAKilledAgentVanish() {
    faults.kill("decode");

    prefill.notify("decode", new byte[] {1});

    assertThat(faults.quiet()).isTrue();
  }

  @Test
  void groupIsQuietOnlyOnceWhatWasSentWasDrained() {
    decode.notify("prefill", new byte[] {1});
    assertThat(faults.quiet()).isFalse();

    prefill.drainNotifications();

    assertThat(faults.quiet()).isTrue();
  }

  @Test
  void attachedNotificationCountsAsSentOnceTheTransferIsSeenDone() {
    TransferHandle handle = read(Optional.of(new byte[] {1}));
    assertThat(faults.quiet()).isFalse(); // the transfer was never polled

    decode.status(handle);
    assertThat(faults.quiet()).isFalse(); // its notification waits at prefill
    prefill.drainNotifications();

    assertThat(faults.quiet()).isTrue();
  }

  private TransferHandle read(Optional<byte[]> notification) {
    return decode.post(
        TransferOp.READ,
        whole(agents.decodeMemory),
        "prefill",
        whole(agents.prefillMemory),
        notification);
  }

  private static DescriptorList whole(KvMemory memory) {
    return new DescriptorList(
        memory.kind(), List.of(new Descriptor(memory.address(), memory.sizeBytes(), 0)));
  }
}
