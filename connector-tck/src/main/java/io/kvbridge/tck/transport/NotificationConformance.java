package io.kvbridge.tck.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.Transport;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Notifications: attached to a transfer they arrive only after its bytes, alone they arrive byte
 * exact, in order, naming their sender, and draining removes what it returns.
 */
public abstract class NotificationConformance extends TransportFixture {

  /** These tests, run against {@code connector}. */
  protected NotificationConformance(ConnectorUnderTest connector) {
    super(connector);
  }

  @Test
  void notificationAttachedToAWriteArrivesOnlyAfterTheBytesAreVisible() {
    Pair pair = connectedPair();
    byte[] localData = randomBytes(REGION_BYTES);
    fill(pair.initiatorMemory(), 0, localData);
    byte[] tag = {'w', 0, 1};

    pair.initiator()
        .post(
            TransferOp.WRITE,
            blocks(pair.initiatorMemory(), 0, 1, 2, 3),
            "target",
            blocks(pair.targetMemory(), 4, 5, 6, 7),
            Optional.of(tag));
    List<Notification> arrived = awaitNotifications(pair.target(), 1);

    // The moment the notification is drained, the bytes must already be there.
    byte[] visible = contents(pair.targetMemory(), 4 * BLOCK_BYTES, 4 * BLOCK_BYTES);
    assertThat(arrived).containsExactly(new Notification("initiator", tag));
    assertThat(visible).isEqualTo(Arrays.copyOfRange(localData, 0, 4 * BLOCK_BYTES));
  }

  @Test
  void notificationAttachedToAReadReachesThePeerNamingTheInitiator() {
    Pair pair = connectedPair();
    byte[] tag = {'r', 0, 0, 7};

    TransferHandle handle =
        pair.initiator()
            .post(
                TransferOp.READ,
                blocks(pair.initiatorMemory(), 1),
                "target",
                blocks(pair.targetMemory(), 2),
                Optional.of(tag));

    assertThat(awaitNotifications(pair.target(), 1))
        .containsExactly(new Notification("initiator", tag));
    assertDone(pair.initiator(), handle);
  }

  @Test
  void notifyDeliversThePayloadByteExactNamingTheSender() {
    Pair pair = connectedPair();
    byte[] payload = new byte[256];
    for (int i = 0; i < payload.length; i++) {
      payload[i] = (byte) i; // every byte value, NUL first
    }

    pair.initiator().notify("target", payload);

    List<Notification> arrived = awaitNotifications(pair.target(), 1);
    assertThat(arrived).hasSize(1);
    assertThat(arrived.get(0).fromAgent()).isEqualTo("initiator");
    assertThat(arrived.get(0).payload()).isEqualTo(payload);
  }

  @Test
  void payloadOfOnlyNulBytesArrivesIntact() {
    Pair pair = connectedPair();

    pair.initiator().notify("target", new byte[] {0, 0, 0});

    assertThat(awaitNotifications(pair.target(), 1).get(0).payload()).containsExactly(0, 0, 0);
  }

  @Test
  void notificationsFromOneSenderArriveInTheOrderSent() {
    Pair pair = connectedPair();

    for (int i = 0; i < 20; i++) {
      pair.initiator().notify("target", new byte[] {(byte) i});
    }

    List<Notification> arrived = awaitNotifications(pair.target(), 20);
    assertThat(arrived)
        .extracting(n -> n.payload()[0])
        .containsExactlyElementsOf(IntStream.range(0, 20).mapToObj(i -> (byte) i).toList());
  }

  @Test
  void notificationsNameEachOfTwoSenders() {
    Pair pair = connectedPair();
    Transport other = transport("other");
    other.loadRemoteMetadata(pair.target().localMetadata());

    pair.initiator().notify("target", new byte[] {1});
    other.notify("target", new byte[] {2});

    assertThat(awaitNotifications(pair.target(), 2))
        .containsExactlyInAnyOrder(
            new Notification("initiator", new byte[] {1}),
            new Notification("other", new byte[] {2}));
  }

  @Test
  void drainingRemovesWhatItReturns() {
    Pair pair = connectedPair();
    pair.initiator().notify("target", new byte[] {42});
    awaitNotifications(pair.target(), 1);

    assertThat(pair.target().drainNotifications()).isEmpty();
  }
}
