package io.kvbridge.fake;

import static io.kvbridge.fake.InFlightNotification.sentBy;
import static io.kvbridge.fake.InFlightNotification.sentTo;
import static io.kvbridge.fake.TwoAgents.firstBytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.TransferStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class NotificationFaultsTest {

  private final TwoAgents agents = TwoAgents.synchronous();
  private final FakeFaults faults = agents.faults();

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
  void dropNotificationsSparesThoseThePredicateDoesNotMatch() {
    faults.dropNotifications(FakeFaults.UNLIMITED, sentTo("decode"));

    agents.prefill.notify("decode", new byte[] {1});
    send(2);

    assertThat(agents.decode.drainNotifications()).isEmpty();
    assertThat(firstBytes(agents.prefill.drainNotifications())).containsExactly((byte) 2);
  }

  @Test
  void droppingAShareLosesSomeAndDeliversTheRest() {
    faults.dropShareOfNotifications(0.5, sentBy("decode"));

    List<Byte> arrived = sendAndDrain(100);

    assertThat(arrived).hasSizeBetween(1, 99);
    assertThat(faults.droppedNotifications()).isEqualTo(100 - arrived.size());
  }

  @Test
  void droppingAShareLosesTheSameNotificationsForTheSameSeed() {
    faults.dropShareOfNotifications(0.3, InFlightNotification.any());
    List<Byte> first = sendAndDrain(100);
    try (TwoAgents again = TwoAgents.synchronous()) {
      again.faults().dropShareOfNotifications(0.3, InFlightNotification.any());
      for (int i = 0; i < 100; i++) {
        again.decode.notify("prefill", new byte[] {(byte) i});
      }

      assertThat(firstBytes(again.prefill.drainNotifications())).isEqualTo(first);
    }
  }

  @Test
  void droppingAShareOfZeroLosesNothing() {
    faults.dropShareOfNotifications(0.0, InFlightNotification.any());

    assertThat(sendAndDrain(20)).hasSize(20);
  }

  @Test
  void shareOutsideZeroToOneIsRefused() {
    assertThatThrownBy(() -> faults.dropShareOfNotifications(1.5, InFlightNotification.any()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("1.5");
  }

  @Test
  void heldNotificationArrivesOnlyWhenReleased() {
    faults.holdNotifications(1, sentBy("decode"));
    send(7);
    assertThat(agents.prefill.drainNotifications()).isEmpty();
    assertThat(faults.heldNotifications())
        .containsExactly(new InFlightNotification("decode", "prefill", new byte[] {7}));

    assertThat(faults.releaseHeldNotifications()).isEqualTo(1);

    assertThat(agents.prefill.drainNotifications())
        .containsExactly(new Notification("decode", new byte[] {7}));
    assertThat(faults.heldNotifications()).isEmpty();
  }

  @Test
  void heldNotificationsAreReleasedInTheOrderSent() {
    faults.holdNotifications(3, sentBy("decode"));
    send(1, 2, 3);

    faults.releaseHeldNotifications();

    assertThat(firstBytes(agents.prefill.drainNotifications()))
        .containsExactly((byte) 1, (byte) 2, (byte) 3);
  }

  @Test
  void holdingStopsAfterItsCount() {
    faults.holdNotifications(1, sentBy("decode"));

    send(1, 2);

    assertThat(firstBytes(agents.prefill.drainNotifications())).containsExactly((byte) 2);
    assertThat(faults.heldNotifications()).hasSize(1);
  }

  @Test
  void heldNotificationToAnAgentThatClosedMeanwhileVanishes() {
    faults.holdNotifications(1, sentTo("prefill"));
    send(1);
    agents.prefill.close();

    try (FakeTransport successor = agents.fabric.join("prefill")) {
      assertThat(faults.releaseHeldNotifications()).isEqualTo(1);

      assertThat(successor.drainNotifications()).isEmpty();
    }
  }

  @Test
  void delayedNotificationSkipsTheGivenNumberOfDrains() {
    faults.delayNotifications(1, sentBy("decode"), 2);
    send(9);

    assertThat(agents.prefill.drainNotifications()).isEmpty();
    assertThat(agents.prefill.drainNotifications()).isEmpty();
    assertThat(firstBytes(agents.prefill.drainNotifications())).containsExactly((byte) 9);
  }

  @Test
  void delayedNotificationIsOvertakenByOnesSentAfterIt() {
    faults.delayNotifications(1, sentBy("decode"), 1);
    send(1, 2);

    List<Notification> first = agents.prefill.drainNotifications();
    List<Notification> second = agents.prefill.drainNotifications();

    assertThat(firstBytes(first)).containsExactly((byte) 2);
    assertThat(firstBytes(second)).containsExactly((byte) 1);
  }

  @Test
  void duplicatedNotificationArrivesTwice() {
    faults.duplicateNotifications(1, sentBy("decode"));

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
  void theEarliestArmedMatchingRuleDecides() {
    faults.duplicateNotifications(1, sentBy("decode"));
    faults.dropNotifications(1, sentBy("decode"));

    send(1, 2);

    // The first notification is duplicated; the drop rule catches the second.
    assertThat(firstBytes(agents.prefill.drainNotifications())).containsExactly((byte) 1, (byte) 1);
  }

  @Test
  void clearDisarmsEveryRule() {
    faults.dropNotifications(FakeFaults.UNLIMITED, InFlightNotification.any());
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
