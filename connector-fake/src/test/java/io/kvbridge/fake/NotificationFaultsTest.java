package io.kvbridge.fake;

import static io.kvbridge.fake.TwoAgents.firstBytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.tck.faults.Faults;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.Transport;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The notification faults of the fault decorator, over fake agents that copy inside {@code post}:
 * rules decide each notification where its receiver drains it.
 */
class NotificationFaultsTest {

  private static final long SEED = 7;

  private final Faults faults = new Faults(SEED);
  private final TwoAgents agents = TwoAgents.synchronous(faults);

  @AfterEach
  void close() {
    agents.close();
  }

  @Test
  void dropNextNotificationsLosesExactlyThatMany() {
    faults.dropNextNotifications(2);

    send(1, 2, 3);

    assertThat(firstBytes(agents.prefill.drainNotifications())).containsExactly((byte) 3);
    assertThat(faults.droppedNotifications()).isEqualTo(2);
  }

  @Test
  void droppingAShareLosesSomeAndDeliversTheRest() {
    faults.dropShareOfNotifications(0.5);

    List<Byte> arrived = sendAndDrain(100);

    assertThat(arrived).hasSizeBetween(1, 99);
    assertThat(faults.droppedNotifications()).isEqualTo(100 - arrived.size());
  }

  @Test
  void droppingAShareLosesTheSameNotificationsForTheSameSeed() {
    faults.dropShareOfNotifications(0.3);
    List<Byte> first = sendAndDrain(100);
    Faults again = new Faults(SEED);
    try (TwoAgents other = TwoAgents.synchronous(again)) {
      again.dropShareOfNotifications(0.3);
      for (int i = 0; i < 100; i++) {
        other.decode.notify("prefill", new byte[] {(byte) i});
      }

      assertThat(firstBytes(other.prefill.drainNotifications())).isEqualTo(first);
    }
  }

  @Test
  void droppingAShareOfZeroLosesNothing() {
    faults.dropShareOfNotifications(0.0);

    assertThat(sendAndDrain(20)).hasSize(20);
  }

  @Test
  void shareOutsideZeroToOneIsRefused() {
    assertThatThrownBy(() -> faults.dropShareOfNotifications(1.5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("1.5");
  }

  @Test
  void heldNotificationArrivesOnlyWhenReleased() {
    faults.holdNextNotifications(1);
    send(7);
    assertThat(agents.prefill.drainNotifications()).isEmpty();
    assertThat(faults.heldNotifications())
        .containsExactly(new Notification("decode", new byte[] {7}));

    assertThat(faults.releaseHeldNotifications()).isEqualTo(1);

    assertThat(agents.prefill.drainNotifications())
        .containsExactly(new Notification("decode", new byte[] {7}));
    assertThat(faults.heldNotifications()).isEmpty();
  }

  @Test
  void heldNotificationsAreReleasedInTheOrderSent() {
    faults.holdNextNotifications(3);
    send(1, 2, 3);
    agents.prefill.drainNotifications();

    faults.releaseHeldNotifications();

    assertThat(firstBytes(agents.prefill.drainNotifications()))
        .containsExactly((byte) 1, (byte) 2, (byte) 3);
  }

  @Test
  void holdingStopsAfterItsCount() {
    faults.holdNextNotifications(1);

    send(1, 2);

    assertThat(firstBytes(agents.prefill.drainNotifications())).containsExactly((byte) 2);
    assertThat(faults.heldNotifications()).hasSize(1);
  }

  @Test
  void suspendedRulesLetNotificationsPassAndKeepTheirCountsForLater() {
    faults.dropNextNotifications(1);
    faults.suspendRules();
    send(1);
    assertThat(firstBytes(agents.prefill.drainNotifications())).containsExactly((byte) 1);

    faults.resumeRules();
    send(2, 3);

    assertThat(firstBytes(agents.prefill.drainNotifications())).containsExactly((byte) 3);
    assertThat(faults.droppedNotifications()).isEqualTo(1);
  }

  @Test
  void heldNotificationToAnAgentThatClosedMeanwhileVanishes() {
    faults.holdNextNotifications(1);
    send(1);
    agents.prefill.drainNotifications();
    agents.prefill.close();

    try (Transport successor = faults.decorate(agents.fabric.join("prefill"))) {
      assertThat(faults.releaseHeldNotifications()).isEqualTo(1);

      assertThat(successor.drainNotifications()).isEmpty();
    }
  }

  @Test
  void delayedNotificationSkipsTheGivenNumberOfDrains() {
    faults.delayNextNotifications(1, 2);
    send(9);

    assertThat(agents.prefill.drainNotifications()).isEmpty();
    assertThat(agents.prefill.drainNotifications()).isEmpty();
    assertThat(firstBytes(agents.prefill.drainNotifications())).containsExactly((byte) 9);
  }

  @Test
  void delayedNotificationIsOvertakenByOnesSentAfterIt() {
    faults.delayNextNotifications(1, 1);
    send(1, 2);

    List<Notification> first = agents.prefill.drainNotifications();
    List<Notification> second = agents.prefill.drainNotifications();

    assertThat(firstBytes(first)).containsExactly((byte) 2);
    assertThat(firstBytes(second)).containsExactly((byte) 1);
  }

  @Test
  void duplicatedNotificationArrivesTwice() {
    faults.duplicateNextNotifications(1);

    send(5, 6);

    assertThat(firstBytes(agents.prefill.drainNotifications()))
        .containsExactly((byte) 5, (byte) 5, (byte) 6);
  }

  @Test
  void rulesApplyToNotificationsAttachedToTransfers() {
    faults.dropNextNotifications(1);

    var handle = agents.read(2, Optional.of(new byte[] {1}));

    assertThat(agents.decode.status(handle)).isEqualTo(TransferStatus.DONE);
    assertThat(agents.prefill.drainNotifications()).isEmpty();
    assertThat(faults.droppedNotifications()).isEqualTo(1);
  }

  @Test
  void theEarliestArmedRuleDecides() {
    faults.duplicateNextNotifications(1);
    faults.dropNextNotifications(1);

    send(1, 2);

    // The first notification is duplicated; the drop rule catches the second.
    assertThat(firstBytes(agents.prefill.drainNotifications())).containsExactly((byte) 1, (byte) 1);
  }

  @Test
  void clearDisarmsEveryRule() {
    faults.dropShareOfNotifications(1.0);
    faults.clear();

    send(1);

    assertThat(firstBytes(agents.prefill.drainNotifications())).containsExactly((byte) 1);
  }

  @Test
  void countBelowOneIsRefused() {
    assertThatThrownBy(() -> faults.dropNextNotifications(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("count must be at least 1");
  }

  private void send(int... firstBytes) {
    for (int b : firstBytes) {
      agents.decode.notify("prefill", new byte[] {(byte) b});
    }
  }

  private List<Byte> sendAndDrain(int count) {
    for (int i = 0; i < count; i++) {
      agents.decode.notify("prefill", new byte[] {(byte) i});
    }
    return new ArrayList<>(firstBytes(agents.prefill.drainNotifications()));
  }
}
