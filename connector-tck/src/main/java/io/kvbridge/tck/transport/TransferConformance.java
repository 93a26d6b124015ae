package io.kvbridge.tck.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferTelemetry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Transfers move bytes: READs and WRITEs copy exactly the pieces described, whole blocks or odd
 * pieces, from several threads at once, and a handle counts and measures what it moved.
 */
public abstract class TransferConformance extends TransportFixture {

  /** These tests, run against {@code connector}. */
  protected TransferConformance(ConnectorUnderTest connector) {
    super(connector);
  }

  @Test
  void readCopiesRemoteBlocksByteExact() {
    Pair pair = connectedPair();
    byte[] remoteData = randomBytes(REGION_BYTES);
    fill(pair.targetMemory(), 0, remoteData);

    TransferHandle handle =
        pair.initiator()
            .post(
                TransferOp.READ,
                blocks(pair.initiatorMemory(), 0, 3, 7),
                "target",
                blocks(pair.targetMemory(), 5, 1, 6),
                Optional.empty());

    assertDone(pair.initiator(), handle);
    assertThat(block(pair.initiatorMemory(), 0)).isEqualTo(block(remoteData, 5));
    assertThat(block(pair.initiatorMemory(), 3)).isEqualTo(block(remoteData, 1));
    assertThat(block(pair.initiatorMemory(), 7)).isEqualTo(block(remoteData, 6));
  }

  @Test
  void writeCopiesLocalBlocksByteExact() {
    Pair pair = connectedPair();
    byte[] localData = randomBytes(REGION_BYTES);
    fill(pair.initiatorMemory(), 0, localData);

    TransferHandle handle =
        pair.initiator()
            .post(
                TransferOp.WRITE,
                blocks(pair.initiatorMemory(), 2, 4, 0),
                "target",
                blocks(pair.targetMemory(), 7, 3, 1),
                Optional.empty());

    assertDone(pair.initiator(), handle);
    assertThat(block(pair.targetMemory(), 7)).isEqualTo(block(localData, 2));
    assertThat(block(pair.targetMemory(), 3)).isEqualTo(block(localData, 4));
    assertThat(block(pair.targetMemory(), 1)).isEqualTo(block(localData, 0));
  }

  @Test
  void transferLeavesBytesOutsideItsDescriptorsUnchanged() {
    Pair pair = connectedPair();
    fill(pair.targetMemory(), 0, randomBytes(REGION_BYTES));
    byte[] before = randomBytes(REGION_BYTES);
    fill(pair.initiatorMemory(), 0, before);

    TransferHandle handle =
        pair.initiator()
            .post(
                TransferOp.READ,
                blocks(pair.initiatorMemory(), 2, 5),
                "target",
                blocks(pair.targetMemory(), 0, 1),
                Optional.empty());

    assertDone(pair.initiator(), handle);
    for (int id : new int[] {0, 1, 3, 4, 6, 7}) {
      assertThat(block(pair.initiatorMemory(), id)).as("block %d", id).isEqualTo(block(before, id));
    }
  }

  @Test
  void handleCountsTheBytesItMoves() {
    Pair pair = connectedPair();

    TransferHandle handle =
        pair.initiator()
            .post(
                TransferOp.READ,
                blocks(pair.initiatorMemory(), 0, 1, 2),
                "target",
                blocks(pair.targetMemory(), 3, 4, 5),
                Optional.empty());

    assertThat(handle.bytes()).isEqualTo(3L * BLOCK_BYTES);
    assertDone(pair.initiator(), handle);
  }

  @Test
  void telemetryOfAFinishedReadCountsItsBytesAndPiecesUntilItIsReleased() {
    Pair pair = connectedPair();
    TransferHandle handle =
        pair.initiator()
            .post(
                TransferOp.READ,
                blocks(pair.initiatorMemory(), 0, 3, 7),
                "target",
                blocks(pair.targetMemory(), 5, 1, 6),
                Optional.empty());
    assertDone(pair.initiator(), handle);

    Optional<TransferTelemetry> finished = pair.initiator().telemetry(handle);
    pair.initiator().release(handle);

    if (underTest.measuresTransfers()) {
      assertThat(finished)
          .hasValueSatisfying(
              t -> {
                assertThat(t.bytes()).isEqualTo(3L * BLOCK_BYTES);
                assertThat(t.descriptors()).isEqualTo(3);
              });
    } else {
      assertThat(finished).isEmpty();
    }
    assertThat(pair.initiator().telemetry(handle)).isEmpty();
  }

  @Test
  void piecesSmallerThanABlockAtOddOffsetsAreCopiedByteExact() {
    Pair pair = connectedPair();
    byte[] remoteData = randomBytes(REGION_BYTES);
    fill(pair.targetMemory(), 0, remoteData);
    KvMemory local = pair.initiatorMemory();
    KvMemory remote = pair.targetMemory();

    TransferHandle handle =
        pair.initiator()
            .post(
                TransferOp.READ,
                new DescriptorList(
                    local.kind(),
                    List.of(
                        new Descriptor(local.address() + 1, 3, local.deviceId()),
                        new Descriptor(local.address() + 1000, 77, local.deviceId()))),
                "target",
                new DescriptorList(
                    remote.kind(),
                    List.of(
                        new Descriptor(remote.address() + 2001, 3, remote.deviceId()),
                        new Descriptor(remote.address() + 13, 77, remote.deviceId()))),
                Optional.empty());

    assertDone(pair.initiator(), handle);
    assertThat(contents(local, 1, 3)).isEqualTo(Arrays.copyOfRange(remoteData, 2001, 2004));
    assertThat(contents(local, 1000, 77)).isEqualTo(Arrays.copyOfRange(remoteData, 13, 90));
  }

  @Test
  void concurrentTransfersFromSeveralThreadsAllArriveIntact() throws Exception {
    Pair pair = connectedPair();
    byte[] remoteData = randomBytes(REGION_BYTES);
    fill(pair.targetMemory(), 0, remoteData);
    ExecutorService threads = Executors.newFixedThreadPool(4);
    try {
      List<Future<TransferHandle>> posted = new ArrayList<>();
      for (int i = 0; i < BLOCKS; i++) {
        int id = i;
        posted.add(
            threads.submit(
                () ->
                    pair.initiator()
                        .post(
                            TransferOp.READ,
                            blocks(pair.initiatorMemory(), id),
                            "target",
                            blocks(pair.targetMemory(), BLOCKS - 1 - id),
                            Optional.empty())));
      }
      for (Future<TransferHandle> handle : posted) {
        assertDone(pair.initiator(), handle.get());
      }
    } finally {
      threads.shutdownNow();
    }

    for (int id = 0; id < BLOCKS; id++) {
      assertThat(block(pair.initiatorMemory(), id))
          .as("block %d", id)
          .isEqualTo(block(remoteData, BLOCKS - 1 - id));
    }
  }

  @Test
  void releasingAFinishedTransferLeavesItsMemoryReusable() {
    Pair pair = connectedPair();
    byte[] remoteData = randomBytes(REGION_BYTES);
    fill(pair.targetMemory(), 0, remoteData);
    TransferHandle first =
        pair.initiator()
            .post(
                TransferOp.READ,
                blocks(pair.initiatorMemory(), 0),
                "target",
                blocks(pair.targetMemory(), 1),
                Optional.empty());
    assertDone(pair.initiator(), first);

    pair.initiator().release(first);
    TransferHandle second =
        pair.initiator()
            .post(
                TransferOp.READ,
                blocks(pair.initiatorMemory(), 0),
                "target",
                blocks(pair.targetMemory(), 2),
                Optional.empty());

    assertDone(pair.initiator(), second);
    assertThat(block(pair.initiatorMemory(), 0)).isEqualTo(block(remoteData, 2));
  }
}
