package io.kvbridge.tck.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.PreparedList;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Prepared lists: descriptors prepared once and selected by index serve many transfers byte exact,
 * and a list is refused once its memory, its peer or the list itself is gone, or when another agent
 * or the wrong side presents it.
 */
public abstract class PreparedListConformance extends TransportFixture {

  /** These tests, run against {@code connector}. */
  protected PreparedListConformance(ConnectorUnderTest connector) {
    super(connector);
  }

  @Test
  void preparedReadCopiesTheSelectedBlocksByteExact() {
    Pair pair = connectedPair();
    byte[] remoteData = randomBytes(REGION_BYTES);
    fill(pair.targetMemory(), 0, remoteData);
    Prepared lists = prepareAll(pair);

    TransferHandle handle =
        pair.initiator()
            .post(
                TransferOp.READ,
                lists.local(),
                new int[] {0, 3, 7},
                lists.remote(),
                new int[] {5, 1, 6},
                Optional.empty());

    assertDone(pair.initiator(), handle);
    assertThat(block(pair.initiatorMemory(), 0)).isEqualTo(block(remoteData, 5));
    assertThat(block(pair.initiatorMemory(), 3)).isEqualTo(block(remoteData, 1));
    assertThat(block(pair.initiatorMemory(), 7)).isEqualTo(block(remoteData, 6));
  }

  @Test
  void preparedWriteCopiesTheSelectedBlocksByteExact() {
    Pair pair = connectedPair();
    byte[] localData = randomBytes(REGION_BYTES);
    fill(pair.initiatorMemory(), 0, localData);
    Prepared lists = prepareAll(pair);

    TransferHandle handle =
        pair.initiator()
            .post(
                TransferOp.WRITE,
                lists.local(),
                new int[] {2, 4},
                lists.remote(),
                new int[] {0, 7},
                Optional.empty());

    assertDone(pair.initiator(), handle);
    assertThat(block(pair.targetMemory(), 0)).isEqualTo(block(localData, 2));
    assertThat(block(pair.targetMemory(), 7)).isEqualTo(block(localData, 4));
  }

  @Test
  void preparedListsServeManyTransfers() {
    Pair pair = connectedPair();
    byte[] remoteData = randomBytes(REGION_BYTES);
    fill(pair.targetMemory(), 0, remoteData);
    Prepared lists = prepareAll(pair);

    for (int round = 0; round < BLOCKS; round++) {
      TransferHandle handle =
          pair.initiator()
              .post(
                  TransferOp.READ,
                  lists.local(),
                  new int[] {round},
                  lists.remote(),
                  new int[] {BLOCKS - 1 - round},
                  Optional.empty());
      assertDone(pair.initiator(), handle);
      pair.initiator().release(handle);
    }

    for (int id = 0; id < BLOCKS; id++) {
      assertThat(block(pair.initiatorMemory(), id)).isEqualTo(block(remoteData, BLOCKS - 1 - id));
    }
  }

  @Test
  void preparedTransferLeavesUnselectedBlocksUnchanged() {
    Pair pair = connectedPair();
    byte[] localData = randomBytes(REGION_BYTES);
    fill(pair.initiatorMemory(), 0, localData);
    fill(pair.targetMemory(), 0, randomBytes(REGION_BYTES));
    Prepared lists = prepareAll(pair);

    assertDone(
        pair.initiator(),
        pair.initiator()
            .post(
                TransferOp.READ,
                lists.local(),
                new int[] {1, 2},
                lists.remote(),
                new int[] {1, 2},
                Optional.empty()));

    for (int id : new int[] {0, 3, 4, 5, 6, 7}) {
      assertThat(block(pair.initiatorMemory(), id)).isEqualTo(block(localData, id));
    }
  }

  @Test
  void handleOfAPreparedTransferCountsTheBytesItMoves() {
    Pair pair = connectedPair();
    Prepared lists = prepareAll(pair);

    TransferHandle handle =
        pair.initiator()
            .post(
                TransferOp.READ,
                lists.local(),
                new int[] {0, 1, 2},
                lists.remote(),
                new int[] {3, 4, 5},
                Optional.empty());

    assertThat(handle.bytes()).isEqualTo(3L * BLOCK_BYTES);
    assertDone(pair.initiator(), handle);
  }

  @Test
  void notificationAttachedToAPreparedWriteArrivesOnlyAfterTheBytesAreVisible() {
    Pair pair = connectedPair();
    byte[] localData = randomBytes(REGION_BYTES);
    fill(pair.initiatorMemory(), 0, localData);
    Prepared lists = prepareAll(pair);

    pair.initiator()
        .post(
            TransferOp.WRITE,
            lists.local(),
            new int[] {6},
            lists.remote(),
            new int[] {2},
            Optional.of(new byte[] {4, 2}));

    List<Notification> arrived = awaitNotifications(pair.target(), 1);
    assertThat(arrived).containsExactly(new Notification("initiator", new byte[] {4, 2}));
    assertThat(block(pair.targetMemory(), 2)).isEqualTo(block(localData, 6));
  }

  @Test
  void indexOutsideAPreparedListIsRefusedBeforeAnyByteMoves() {
    Pair pair = connectedPair();
    byte[] localData = randomBytes(REGION_BYTES);
    fill(pair.initiatorMemory(), 0, localData);
    Prepared lists = prepareAll(pair);

    for (int[] remoteIndices : new int[][] {{0, BLOCKS}, {0, -1}}) {
      assertThatThrownBy(
              () ->
                  pair.initiator()
                      .post(
                          TransferOp.READ,
                          lists.local(),
                          new int[] {0, 1},
                          lists.remote(),
                          remoteIndices,
                          Optional.empty()))
          .isInstanceOf(TransportException.class);
    }
    assertThatThrownBy(
            () ->
                pair.initiator()
                    .post(
                        TransferOp.READ,
                        lists.local(),
                        new int[] {BLOCKS},
                        lists.remote(),
                        new int[] {0},
                        Optional.empty()))
        .isInstanceOf(TransportException.class);
    assertThat(contents(pair.initiatorMemory(), 0, REGION_BYTES)).isEqualTo(localData);
  }

  @Test
  void indexArraysOfDifferentLengthsAreRefused() {
    Pair pair = connectedPair();
    Prepared lists = prepareAll(pair);

    assertThatThrownBy(
            () ->
                pair.initiator()
                    .post(
                        TransferOp.READ,
                        lists.local(),
                        new int[] {0, 1},
                        lists.remote(),
                        new int[] {0},
                        Optional.empty()))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void emptyIndexArraysAreRefused() {
    Pair pair = connectedPair();
    Prepared lists = prepareAll(pair);

    assertThatThrownBy(
            () ->
                pair.initiator()
                    .post(
                        TransferOp.READ,
                        lists.local(),
                        new int[0],
                        lists.remote(),
                        new int[0],
                        Optional.empty()))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void preparedPiecesOfDifferentLengthsAreRefused() {
    Pair pair = connectedPair();
    KvMemory remote = pair.targetMemory();
    PreparedList local = pair.initiator().prepare(blocks(pair.initiatorMemory(), 0));
    PreparedList halves =
        pair.initiator()
            .prepare(
                "target",
                new DescriptorList(
                    remote.kind(), List.of(new Descriptor(remote.address(), BLOCK_BYTES / 2, 0))));

    assertThatThrownBy(
            () ->
                pair.initiator()
                    .post(
                        TransferOp.READ,
                        local,
                        new int[] {0},
                        halves,
                        new int[] {0},
                        Optional.empty()))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void preparingALocalListOutsideRegisteredMemoryIsRefused() {
    Pair pair = connectedPair();
    KvMemory local = pair.initiatorMemory();

    assertThatThrownBy(
            () ->
                pair.initiator()
                    .prepare(new DescriptorList(local.kind(), List.of(pastTheEnd(local, 4096)))))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void preparingARemoteListOfAnUnknownPeerIsRefused() {
    Transport initiator = transport("initiator");
    registered(initiator);
    Transport target = transport("target");
    KvMemory remote = registered(target);

    assertThatThrownBy(() -> initiator.prepare("target", blocks(remote, 0)))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void preparingARemoteListOutsideThePeersRegisteredMemoryIsRefused() {
    Pair pair = connectedPair();
    KvMemory remote = pair.targetMemory();

    assertThatThrownBy(
            () ->
                pair.initiator()
                    .prepare(
                        "target",
                        new DescriptorList(remote.kind(), List.of(pastTheEnd(remote, 4096)))))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void aRemoteListIsUnusableOnceItsPeerIsInvalidated() {
    Pair pair = connectedPair();
    Prepared lists = prepareAll(pair);

    pair.initiator().invalidateRemote("target");

    assertThatThrownBy(() -> readBlockZero(pair, lists)).isInstanceOf(TransportException.class);
  }

  @Test
  void aRemoteListIsUnusableOnceItsPeersMetadataIsLoadedAgain() {
    Pair pair = connectedPair();
    Prepared lists = prepareAll(pair);

    pair.initiator().loadRemoteMetadata(pair.target().localMetadata());

    assertThatThrownBy(() -> readBlockZero(pair, lists)).isInstanceOf(TransportException.class);
  }

  @Test
  void aRemoteListPreparedAgainAfterItsPeerWasReloadedIsUsable() {
    Pair pair = connectedPair();
    byte[] remoteData = randomBytes(REGION_BYTES);
    fill(pair.targetMemory(), 0, remoteData);
    prepareAll(pair);
    pair.initiator().invalidateRemote("target");
    pair.initiator().loadRemoteMetadata(pair.target().localMetadata());

    Prepared fresh = prepareAll(pair);

    assertDone(pair.initiator(), readBlockZero(pair, fresh));
    assertThat(block(pair.initiatorMemory(), 0)).isEqualTo(block(remoteData, 0));
  }

  @Test
  void aLocalListIsUnusableOnceItsMemoryIsDeregistered() {
    Pair pair = connectedPair();
    Prepared lists = prepareAll(pair);

    pair.initiator().deregister(pair.initiatorMemory());

    assertThatThrownBy(() -> readBlockZero(pair, lists)).isInstanceOf(TransportException.class);
  }

  @Test
  void aReleasedListIsUnusable() {
    Pair pair = connectedPair();
    Prepared lists = prepareAll(pair);

    pair.initiator().release(lists.remote());

    assertThatThrownBy(() -> readBlockZero(pair, lists)).isInstanceOf(TransportException.class);
  }

  @Test
  void releasingAPreparedListTwiceIsHarmless() {
    Pair pair = connectedPair();
    Prepared lists = prepareAll(pair);
    pair.initiator().release(lists.local());

    assertThatCode(() -> pair.initiator().release(lists.local())).doesNotThrowAnyException();
  }

  @Test
  void listsOnTheWrongSideAreRefused() {
    Pair pair = connectedPair();
    Prepared lists = prepareAll(pair);

    assertThatThrownBy(
            () ->
                pair.initiator()
                    .post(
                        TransferOp.READ,
                        lists.remote(),
                        new int[] {0},
                        lists.local(),
                        new int[] {0},
                        Optional.empty()))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void aListPreparedByAnotherAgentIsRefused() {
    Pair pair = connectedPair();
    Prepared lists = prepareAll(pair);
    Transport other = transport("other");
    PreparedList foreign = other.prepare(blocks(registered(other), 0, 1, 2, 3, 4, 5, 6, 7));

    assertThatThrownBy(
            () ->
                pair.initiator()
                    .post(
                        TransferOp.READ,
                        foreign,
                        new int[] {0},
                        lists.remote(),
                        new int[] {0},
                        Optional.empty()))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void closedTransportRefusesToPostFromPreparedLists() {
    Pair pair = connectedPair();
    Prepared lists = prepareAll(pair);

    pair.initiator().close();

    assertThatThrownBy(() -> readBlockZero(pair, lists)).isInstanceOf(TransportException.class);
  }

  @Test
  void concurrentPreparedTransfersFromSeveralThreadsAllArriveIntact() throws Exception {
    Pair pair = connectedPair();
    byte[] remoteData = randomBytes(REGION_BYTES);
    fill(pair.targetMemory(), 0, remoteData);
    Prepared lists = prepareAll(pair);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < BLOCKS; t++) {
        int id = t;
        done.add(
            pool.submit(
                () ->
                    assertDone(
                        pair.initiator(),
                        pair.initiator()
                            .post(
                                TransferOp.READ,
                                lists.local(),
                                new int[] {id},
                                lists.remote(),
                                new int[] {BLOCKS - 1 - id},
                                Optional.empty()))));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }

    for (int id = 0; id < BLOCKS; id++) {
      assertThat(block(pair.initiatorMemory(), id)).isEqualTo(block(remoteData, BLOCKS - 1 - id));
    }
  }
}
