package io.kvbridge.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.PreparedList;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.TransferTelemetry;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The {@link Transport} contract, as every connector's transport must honour it. A connector runs
 * it by extending this class and saying how to create a fresh agent; the suite drives nothing but
 * the {@code Transport} interface, so a passing transport can carry the pull protocol.
 *
 * <p>Buffers are small (a few blocks of {@value #BLOCK_BYTES} bytes) and the data is drawn from a
 * seeded {@link Random}, so a failure replays identically. Asynchronous completion is awaited by
 * polling {@link Transport#status} and {@link Transport#drainNotifications()}, bounded by {@link
 * #completionTimeout()}.
 *
 * <p>Every transport and memory the suite creates is closed after each test (transports first).
 */
public abstract class TransportConformanceTest {

  /** The size of one block in these tests. */
  protected static final int BLOCK_BYTES = 256;

  /** The number of blocks in one test region. */
  protected static final int BLOCKS = 8;

  /** The size of one test region. */
  protected static final int REGION_BYTES = BLOCK_BYTES * BLOCKS;

  private final List<Transport> transports = new ArrayList<>();
  private final List<KvMemory> memories = new ArrayList<>();

  /** The data source; seeded so that a failing test replays byte for byte. */
  protected final Random random = new Random(0x6B76_6272L);

  /**
   * Creates a fresh agent named {@code agentName} that has loaded no peer's metadata. Agents
   * created within one test must be able to reach each other once they loaded each other's
   * metadata; agents of different tests must not collide.
   */
  protected abstract Transport newTransport(String agentName);

  /**
   * Whether closing an agent stops peers from writing into its memory while the memory lives.
   * One-sided transports over shared memory (NIXL with UCX's cma or sm) cannot promise it: their
   * peers copy straight into the process's pages. kvbridge does not rely on it: a producer's memory
   * is only ever read, and an engine frees its memory after closing its connector.
   */
  protected boolean closingRevokesPeerAccess() {
    return true;
  }

  /**
   * Whether the agents {@link #newTransport} creates measure their own transfers ({@link
   * Transport#telemetry}); the default, a transport that measures nothing, reports no telemetry.
   */
  protected boolean measuresTransfers() {
    return false;
  }

  /** How long the suite waits for a transfer to settle or a notification to arrive. */
  protected Duration completionTimeout() {
    return Duration.ofSeconds(10);
  }

  @AfterEach
  void closeEverything() {
    for (Transport t : transports) {
      t.close();
    }
    for (KvMemory m : memories) {
      m.close();
    }
  }

  // ---- memory and metadata -------------------------------------------------------------------

  @Test
  void allocatedMemoryHasTheRequestedSizeAndTheTransportsKind() {
    Transport t = transport("agent");

    KvMemory memory = allocate(t);

    assertThat(memory.sizeBytes()).isEqualTo(REGION_BYTES);
    assertThat(memory.kind()).isEqualTo(t.memoryKind());
  }

  @Test
  void allocatedMemoryReadsBackWhatWasWritten() {
    KvMemory memory = allocate(transport("agent"));
    byte[] data = randomBytes(REGION_BYTES);

    fill(memory, 0, data);

    assertThat(contents(memory, 0, REGION_BYTES)).isEqualTo(data);
  }

  @Test
  void allocatedMemoryCanBeRegistered() {
    Transport t = transport("agent");
    KvMemory memory = allocate(t);

    assertThatCode(() -> t.register(memory)).doesNotThrowAnyException();
  }

  @Test
  void agentNameIsTheNameItWasCreatedWith() {
    assertThat(transport("some-agent").agentName()).isEqualTo("some-agent");
  }

  @Test
  void loadingPeerMetadataReturnsThePeersAgentName() {
    Transport initiator = transport("initiator");
    Transport target = transport("target");
    registered(target);

    assertThat(initiator.loadRemoteMetadata(target.localMetadata())).isEqualTo("target");
  }

  @Test
  void aBlobNamesItsAgentWithoutBeingLoaded() {
    Transport initiator = transport("initiator");
    KvMemory local = registered(initiator);
    Transport target = transport("target");
    KvMemory remote = registered(target);

    assertThat(initiator.peerAgentName(target.localMetadata())).isEqualTo("target");
    assertThat(initiator.peerAgentName(initiator.localMetadata())).isEqualTo("initiator");
    assertAReadFromTargetIsRefused(initiator, local, remote);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("unnamedMetadata")
  void theAgentNameOfAMalformedBlobIsRefused(String what, MetadataDefect defect) {
    Transport initiator = transport("initiator");
    Transport target = transport("target");
    registered(target);
    byte[] blob = defect.apply(target.localMetadata(), random);

    assertThatThrownBy(() -> initiator.peerAgentName(blob)).isInstanceOf(TransportException.class);
  }

  /** Defects that leave no agent name to read (a truncated blob may still hold its whole name). */
  static Stream<Arguments> unnamedMetadata() {
    return malformedMetadata().limit(3);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("malformedMetadata")
  void malformedMetadataIsRefused(String what, MetadataDefect defect) {
    Transport initiator = transport("initiator");
    Transport target = transport("target");
    registered(target);
    byte[] blob = defect.apply(target.localMetadata(), random);

    assertThatThrownBy(() -> initiator.loadRemoteMetadata(blob))
        .isInstanceOf(TransportException.class);
  }

  static Stream<Arguments> malformedMetadata() {
    return Stream.of(
        Arguments.of("empty", (MetadataDefect) (valid, random) -> new byte[0]),
        Arguments.of("one byte", (MetadataDefect) (valid, random) -> new byte[] {1}),
        Arguments.of(
            "random bytes",
            (MetadataDefect)
                (valid, random) -> {
                  byte[] junk = new byte[valid.length];
                  random.nextBytes(junk);
                  return junk;
                }),
        Arguments.of(
            "first half of a valid blob",
            (MetadataDefect) (valid, random) -> Arrays.copyOf(valid, valid.length / 2)),
        Arguments.of(
            "valid blob missing its last byte",
            (MetadataDefect) (valid, random) -> Arrays.copyOf(valid, valid.length - 1)));
  }

  /** Turns a valid metadata blob into a malformed one. */
  @FunctionalInterface
  protected interface MetadataDefect {
    /** Returns the malformed blob. */
    byte[] apply(byte[] valid, Random random);
  }

  // ---- transfers: bytes ----------------------------------------------------------------------

  @Test
  void readCopiesRemoteBlocksByteExact() {
    Pair pair = connectedPair();
    byte[] remoteData = randomBytes(REGION_BYTES);
    fill(pair.targetMemory, 0, remoteData);

    TransferHandle handle =
        pair.initiator.post(
            TransferOp.READ,
            blocks(pair.initiatorMemory, 0, 3, 7),
            "target",
            blocks(pair.targetMemory, 5, 1, 6),
            Optional.empty());

    assertDone(pair.initiator, handle);
    assertThat(block(pair.initiatorMemory, 0)).isEqualTo(block(remoteData, 5));
    assertThat(block(pair.initiatorMemory, 3)).isEqualTo(block(remoteData, 1));
    assertThat(block(pair.initiatorMemory, 7)).isEqualTo(block(remoteData, 6));
  }

  @Test
  void writeCopiesLocalBlocksByteExact() {
    Pair pair = connectedPair();
    byte[] localData = randomBytes(REGION_BYTES);
    fill(pair.initiatorMemory, 0, localData);

    TransferHandle handle =
        pair.initiator.post(
            TransferOp.WRITE,
            blocks(pair.initiatorMemory, 2, 4, 0),
            "target",
            blocks(pair.targetMemory, 7, 3, 1),
            Optional.empty());

    assertDone(pair.initiator, handle);
    assertThat(block(pair.targetMemory, 7)).isEqualTo(block(localData, 2));
    assertThat(block(pair.targetMemory, 3)).isEqualTo(block(localData, 4));
    assertThat(block(pair.targetMemory, 1)).isEqualTo(block(localData, 0));
  }

  @Test
  void transferLeavesBytesOutsideItsDescriptorsUnchanged() {
    Pair pair = connectedPair();
    fill(pair.targetMemory, 0, randomBytes(REGION_BYTES));
    byte[] before = randomBytes(REGION_BYTES);
    fill(pair.initiatorMemory, 0, before);

    TransferHandle handle =
        pair.initiator.post(
            TransferOp.READ,
            blocks(pair.initiatorMemory, 2, 5),
            "target",
            blocks(pair.targetMemory, 0, 1),
            Optional.empty());

    assertDone(pair.initiator, handle);
    for (int id : new int[] {0, 1, 3, 4, 6, 7}) {
      assertThat(block(pair.initiatorMemory, id)).as("block %d", id).isEqualTo(block(before, id));
    }
  }

  @Test
  void handleCountsTheBytesItMoves() {
    Pair pair = connectedPair();

    TransferHandle handle =
        pair.initiator.post(
            TransferOp.READ,
            blocks(pair.initiatorMemory, 0, 1, 2),
            "target",
            blocks(pair.targetMemory, 3, 4, 5),
            Optional.empty());

    assertThat(handle.bytes()).isEqualTo(3L * BLOCK_BYTES);
    assertDone(pair.initiator, handle);
  }

  @Test
  void telemetryOfAFinishedReadCountsItsBytesAndPiecesUntilItIsReleased() {
    Pair pair = connectedPair();
    TransferHandle handle =
        pair.initiator.post(
            TransferOp.READ,
            blocks(pair.initiatorMemory, 0, 3, 7),
            "target",
            blocks(pair.targetMemory, 5, 1, 6),
            Optional.empty());
    assertDone(pair.initiator, handle);

    Optional<TransferTelemetry> finished = pair.initiator.telemetry(handle);
    pair.initiator.release(handle);

    if (measuresTransfers()) {
      assertThat(finished)
          .hasValueSatisfying(
              t -> {
                assertThat(t.bytes()).isEqualTo(3L * BLOCK_BYTES);
                assertThat(t.descriptors()).isEqualTo(3);
              });
    } else {
      assertThat(finished).isEmpty();
    }
    assertThat(pair.initiator.telemetry(handle)).isEmpty();
  }

  @Test
  void piecesSmallerThanABlockAtOddOffsetsAreCopiedByteExact() {
    Pair pair = connectedPair();
    byte[] remoteData = randomBytes(REGION_BYTES);
    fill(pair.targetMemory, 0, remoteData);
    KvMemory local = pair.initiatorMemory;
    KvMemory remote = pair.targetMemory;

    TransferHandle handle =
        pair.initiator.post(
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

    assertDone(pair.initiator, handle);
    assertThat(contents(local, 1, 3)).isEqualTo(Arrays.copyOfRange(remoteData, 2001, 2004));
    assertThat(contents(local, 1000, 77)).isEqualTo(Arrays.copyOfRange(remoteData, 13, 90));
  }

  @Test
  void concurrentTransfersFromSeveralThreadsAllArriveIntact() throws Exception {
    Pair pair = connectedPair();
    byte[] remoteData = randomBytes(REGION_BYTES);
    fill(pair.targetMemory, 0, remoteData);
    ExecutorService threads = Executors.newFixedThreadPool(4);
    try {
      List<Future<TransferHandle>> posted = new ArrayList<>();
      for (int i = 0; i < BLOCKS; i++) {
        int id = i;
        posted.add(
            threads.submit(
                () ->
                    pair.initiator.post(
                        TransferOp.READ,
                        blocks(pair.initiatorMemory, id),
                        "target",
                        blocks(pair.targetMemory, BLOCKS - 1 - id),
                        Optional.empty())));
      }
      for (Future<TransferHandle> handle : posted) {
        assertDone(pair.initiator, handle.get());
      }
    } finally {
      threads.shutdownNow();
    }

    for (int id = 0; id < BLOCKS; id++) {
      assertThat(block(pair.initiatorMemory, id))
          .as("block %d", id)
          .isEqualTo(block(remoteData, BLOCKS - 1 - id));
    }
  }

  @Test
  void releasingAFinishedTransferLeavesItsMemoryReusable() {
    Pair pair = connectedPair();
    byte[] remoteData = randomBytes(REGION_BYTES);
    fill(pair.targetMemory, 0, remoteData);
    TransferHandle first =
        pair.initiator.post(
            TransferOp.READ,
            blocks(pair.initiatorMemory, 0),
            "target",
            blocks(pair.targetMemory, 1),
            Optional.empty());
    assertDone(pair.initiator, first);

    pair.initiator.release(first);
    TransferHandle second =
        pair.initiator.post(
            TransferOp.READ,
            blocks(pair.initiatorMemory, 0),
            "target",
            blocks(pair.targetMemory, 2),
            Optional.empty());

    assertDone(pair.initiator, second);
    assertThat(block(pair.initiatorMemory, 0)).isEqualTo(block(remoteData, 2));
  }

  // ---- notifications -------------------------------------------------------------------------

  @Test
  void notificationAttachedToAWriteArrivesOnlyAfterTheBytesAreVisible() {
    Pair pair = connectedPair();
    byte[] localData = randomBytes(REGION_BYTES);
    fill(pair.initiatorMemory, 0, localData);
    byte[] tag = {'w', 0, 1};

    pair.initiator.post(
        TransferOp.WRITE,
        blocks(pair.initiatorMemory, 0, 1, 2, 3),
        "target",
        blocks(pair.targetMemory, 4, 5, 6, 7),
        Optional.of(tag));
    List<Notification> arrived = awaitNotifications(pair.target, 1);

    // The moment the notification is drained, the bytes must already be there.
    byte[] visible = contents(pair.targetMemory, 4 * BLOCK_BYTES, 4 * BLOCK_BYTES);
    assertThat(arrived).containsExactly(new Notification("initiator", tag));
    assertThat(visible).isEqualTo(Arrays.copyOfRange(localData, 0, 4 * BLOCK_BYTES));
  }

  @Test
  void notificationAttachedToAReadReachesThePeerNamingTheInitiator() {
    Pair pair = connectedPair();
    byte[] tag = {'r', 0, 0, 7};

    TransferHandle handle =
        pair.initiator.post(
            TransferOp.READ,
            blocks(pair.initiatorMemory, 1),
            "target",
            blocks(pair.targetMemory, 2),
            Optional.of(tag));

    assertThat(awaitNotifications(pair.target, 1))
        .containsExactly(new Notification("initiator", tag));
    assertDone(pair.initiator, handle);
  }

  @Test
  void notifyDeliversThePayloadByteExactNamingTheSender() {
    Pair pair = connectedPair();
    byte[] payload = new byte[256];
    for (int i = 0; i < payload.length; i++) {
      payload[i] = (byte) i; // every byte value, NUL first
    }

    pair.initiator.notify("target", payload);

    List<Notification> arrived = awaitNotifications(pair.target, 1);
    assertThat(arrived).hasSize(1);
    assertThat(arrived.get(0).fromAgent()).isEqualTo("initiator");
    assertThat(arrived.get(0).payload()).isEqualTo(payload);
  }

  @Test
  void payloadOfOnlyNulBytesArrivesIntact() {
    Pair pair = connectedPair();

    pair.initiator.notify("target", new byte[] {0, 0, 0});

    assertThat(awaitNotifications(pair.target, 1).get(0).payload()).containsExactly(0, 0, 0);
  }

  @Test
  void notificationsFromOneSenderArriveInTheOrderSent() {
    Pair pair = connectedPair();

    for (int i = 0; i < 20; i++) {
      pair.initiator.notify("target", new byte[] {(byte) i});
    }

    List<Notification> arrived = awaitNotifications(pair.target, 20);
    assertThat(arrived)
        .extracting(n -> n.payload()[0])
        .containsExactlyElementsOf(IntStream.range(0, 20).mapToObj(i -> (byte) i).toList());
  }

  @Test
  void notificationsNameEachOfTwoSenders() {
    Pair pair = connectedPair();
    Transport other = transport("other");
    other.loadRemoteMetadata(pair.target.localMetadata());

    pair.initiator.notify("target", new byte[] {1});
    other.notify("target", new byte[] {2});

    assertThat(awaitNotifications(pair.target, 2))
        .containsExactlyInAnyOrder(
            new Notification("initiator", new byte[] {1}),
            new Notification("other", new byte[] {2}));
  }

  @Test
  void drainingRemovesWhatItReturns() {
    Pair pair = connectedPair();
    pair.initiator.notify("target", new byte[] {42});
    awaitNotifications(pair.target, 1);

    assertThat(pair.target.drainNotifications()).isEmpty();
  }

  // ---- refusals: bounds ----------------------------------------------------------------------

  @Test
  void localDescriptorOutsideRegisteredMemoryIsRefusedBeforeAnyByteMoves() {
    Pair pair = connectedPair();
    fill(pair.targetMemory, 0, randomBytes(REGION_BYTES));
    byte[] before = randomBytes(REGION_BYTES);
    fill(pair.initiatorMemory, 0, before);
    KvMemory local = pair.initiatorMemory;

    assertThatThrownBy(
            () ->
                pair.initiator.post(
                    TransferOp.READ,
                    new DescriptorList(
                        local.kind(), List.of(piece(local, 0), pastTheEnd(local, 0))),
                    "target",
                    blocks(pair.targetMemory, 1, 2),
                    Optional.empty()))
        .isInstanceOf(TransportException.class);
    assertThat(contents(local, 0, REGION_BYTES)).isEqualTo(before);
  }

  @Test
  void remoteDescriptorOutsideRegisteredMemoryIsRefusedBeforeAnyByteMoves() {
    Pair pair = connectedPair();
    fill(pair.initiatorMemory, 0, randomBytes(REGION_BYTES));
    byte[] before = randomBytes(REGION_BYTES);
    fill(pair.targetMemory, 0, before);
    KvMemory remote = pair.targetMemory;

    assertThatThrownBy(
            () ->
                pair.initiator.post(
                    TransferOp.WRITE,
                    blocks(pair.initiatorMemory, 1, 2),
                    "target",
                    new DescriptorList(
                        remote.kind(), List.of(piece(remote, 0), pastTheEnd(remote, 0))),
                    Optional.empty()))
        .isInstanceOf(TransportException.class);
    assertThat(contents(remote, 0, REGION_BYTES)).isEqualTo(before);
  }

  @Test
  void descriptorStraddlingTheEndOfARegionIsRefused() {
    Pair pair = connectedPair();
    KvMemory local = pair.initiatorMemory;
    Descriptor straddling =
        new Descriptor(
            local.address() + REGION_BYTES - BLOCK_BYTES / 2, BLOCK_BYTES, local.deviceId());

    assertThatThrownBy(
            () ->
                pair.initiator.post(
                    TransferOp.READ,
                    new DescriptorList(local.kind(), List.of(straddling)),
                    "target",
                    blocks(pair.targetMemory, 0),
                    Optional.empty()))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void descriptorBeforeTheStartOfARegionIsRefused() {
    Pair pair = connectedPair();
    KvMemory remote = pair.targetMemory;
    Descriptor before = new Descriptor(remote.address() - 1, BLOCK_BYTES, remote.deviceId());

    assertThatThrownBy(
            () ->
                pair.initiator.post(
                    TransferOp.READ,
                    blocks(pair.initiatorMemory, 0),
                    "target",
                    new DescriptorList(remote.kind(), List.of(before)),
                    Optional.empty()))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void localMemoryThatWasNeverRegisteredIsRefused() {
    Pair pair = connectedPair();
    KvMemory unregistered = allocate(pair.initiator);
    byte[] before = randomBytes(REGION_BYTES);
    fill(unregistered, 0, before);

    assertThatThrownBy(
            () ->
                pair.initiator.post(
                    TransferOp.READ,
                    blocks(unregistered, 0),
                    "target",
                    blocks(pair.targetMemory, 0),
                    Optional.empty()))
        .isInstanceOf(TransportException.class);
    assertThat(contents(unregistered, 0, REGION_BYTES)).isEqualTo(before);
  }

  @Test
  void deregisteredLocalMemoryIsRefused() {
    Pair pair = connectedPair();
    pair.initiator.deregister(pair.initiatorMemory);

    assertThatThrownBy(
            () ->
                pair.initiator.post(
                    TransferOp.READ,
                    blocks(pair.initiatorMemory, 0),
                    "target",
                    blocks(pair.targetMemory, 0),
                    Optional.empty()))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void remoteMemoryDeregisteredBeforeItsMetadataWasReloadedIsRefused() {
    Pair pair = connectedPair();
    pair.target.deregister(pair.targetMemory);
    pair.initiator.loadRemoteMetadata(pair.target.localMetadata());

    assertThatThrownBy(
            () ->
                pair.initiator.post(
                    TransferOp.READ,
                    blocks(pair.initiatorMemory, 0),
                    "target",
                    blocks(pair.targetMemory, 0),
                    Optional.empty()))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void descriptorsOfAnotherMemoryKindAreRefused() {
    Pair pair = connectedPair();
    KvMemory local = pair.initiatorMemory;
    MemoryKind other = local.kind() == MemoryKind.DRAM ? MemoryKind.VRAM : MemoryKind.DRAM;

    assertThatThrownBy(
            () ->
                pair.initiator.post(
                    TransferOp.READ,
                    new DescriptorList(other, List.of(piece(local, 0))),
                    "target",
                    blocks(pair.targetMemory, 0),
                    Optional.empty()))
        .isInstanceOf(TransportException.class);
  }

  // ---- refusals: peers and pairing -----------------------------------------------------------

  @Test
  void postingToAPeerWhoseMetadataWasNeverLoadedIsRefused() {
    Transport initiator = transport("initiator");
    KvMemory local = registered(initiator);
    Transport target = transport("target");
    KvMemory remote = registered(target);

    assertAReadFromTargetIsRefused(initiator, local, remote);
  }

  /** A READ by {@code initiator} of agent {@code target}'s {@code remote} block 0 is refused. */
  private void assertAReadFromTargetIsRefused(
      Transport initiator, KvMemory local, KvMemory remote) {
    assertThatThrownBy(
            () ->
                initiator.post(
                    TransferOp.READ,
                    blocks(local, 0),
                    "target",
                    blocks(remote, 0),
                    Optional.empty()))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void postingToAnInvalidatedPeerIsRefused() {
    Pair pair = connectedPair();

    pair.initiator.invalidateRemote("target");

    assertThatThrownBy(
            () ->
                pair.initiator.post(
                    TransferOp.READ,
                    blocks(pair.initiatorMemory, 0),
                    "target",
                    blocks(pair.targetMemory, 0),
                    Optional.empty()))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void notifyingAPeerWhoseMetadataWasNeverLoadedIsRefused() {
    Transport initiator = transport("initiator");
    transport("target");

    assertThatThrownBy(() -> initiator.notify("target", new byte[] {1}))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void notifyingAnInvalidatedPeerIsRefused() {
    Pair pair = connectedPair();

    pair.initiator.invalidateRemote("target");

    assertThatThrownBy(() -> pair.initiator.notify("target", new byte[] {1}))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void invalidatingAnUnknownPeerIsIgnored() {
    Transport t = transport("agent");

    assertThatCode(() -> t.invalidateRemote("nobody")).doesNotThrowAnyException();
  }

  @Test
  void reloadingAnInvalidatedPeerMakesItReachableAgain() {
    Pair pair = connectedPair();
    pair.initiator.invalidateRemote("target");

    pair.initiator.loadRemoteMetadata(pair.target.localMetadata());

    assertDone(
        pair.initiator,
        pair.initiator.post(
            TransferOp.READ,
            blocks(pair.initiatorMemory, 0),
            "target",
            blocks(pair.targetMemory, 0),
            Optional.empty()));
  }

  @Test
  void listsOfDifferentSizesAreRefused() {
    Pair pair = connectedPair();

    assertThatThrownBy(
            () ->
                pair.initiator.post(
                    TransferOp.READ,
                    blocks(pair.initiatorMemory, 0, 1),
                    "target",
                    blocks(pair.targetMemory, 0),
                    Optional.empty()))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void piecesOfDifferentLengthsAreRefused() {
    Pair pair = connectedPair();
    KvMemory remote = pair.targetMemory;

    assertThatThrownBy(
            () ->
                pair.initiator.post(
                    TransferOp.READ,
                    blocks(pair.initiatorMemory, 0),
                    "target",
                    new DescriptorList(
                        remote.kind(),
                        List.of(new Descriptor(remote.address(), BLOCK_BYTES / 2, 0))),
                    Optional.empty()))
        .isInstanceOf(TransportException.class);
  }

  // ---- prepared lists ------------------------------------------------------------------------

  @Test
  void preparedReadCopiesTheSelectedBlocksByteExact() {
    Pair pair = connectedPair();
    byte[] remoteData = randomBytes(REGION_BYTES);
    fill(pair.targetMemory, 0, remoteData);
    Prepared lists = prepareAll(pair);

    TransferHandle handle =
        pair.initiator.post(
            TransferOp.READ,
            lists.local,
            new int[] {0, 3, 7},
            lists.remote,
            new int[] {5, 1, 6},
            Optional.empty());

    assertDone(pair.initiator, handle);
    assertThat(block(pair.initiatorMemory, 0)).isEqualTo(block(remoteData, 5));
    assertThat(block(pair.initiatorMemory, 3)).isEqualTo(block(remoteData, 1));
    assertThat(block(pair.initiatorMemory, 7)).isEqualTo(block(remoteData, 6));
  }

  @Test
  void preparedWriteCopiesTheSelectedBlocksByteExact() {
    Pair pair = connectedPair();
    byte[] localData = randomBytes(REGION_BYTES);
    fill(pair.initiatorMemory, 0, localData);
    Prepared lists = prepareAll(pair);

    TransferHandle handle =
        pair.initiator.post(
            TransferOp.WRITE,
            lists.local,
            new int[] {2, 4},
            lists.remote,
            new int[] {0, 7},
            Optional.empty());

    assertDone(pair.initiator, handle);
    assertThat(block(pair.targetMemory, 0)).isEqualTo(block(localData, 2));
    assertThat(block(pair.targetMemory, 7)).isEqualTo(block(localData, 4));
  }

  @Test
  void preparedListsServeManyTransfers() {
    Pair pair = connectedPair();
    byte[] remoteData = randomBytes(REGION_BYTES);
    fill(pair.targetMemory, 0, remoteData);
    Prepared lists = prepareAll(pair);

    for (int round = 0; round < BLOCKS; round++) {
      TransferHandle handle =
          pair.initiator.post(
              TransferOp.READ,
              lists.local,
              new int[] {round},
              lists.remote,
              new int[] {BLOCKS - 1 - round},
              Optional.empty());
      assertDone(pair.initiator, handle);
      pair.initiator.release(handle);
    }

    for (int id = 0; id < BLOCKS; id++) {
      assertThat(block(pair.initiatorMemory, id)).isEqualTo(block(remoteData, BLOCKS - 1 - id));
    }
  }

  @Test
  void preparedTransferLeavesUnselectedBlocksUnchanged() {
    Pair pair = connectedPair();
    byte[] localData = randomBytes(REGION_BYTES);
    fill(pair.initiatorMemory, 0, localData);
    fill(pair.targetMemory, 0, randomBytes(REGION_BYTES));
    Prepared lists = prepareAll(pair);

    assertDone(
        pair.initiator,
        pair.initiator.post(
            TransferOp.READ,
            lists.local,
            new int[] {1, 2},
            lists.remote,
            new int[] {1, 2},
            Optional.empty()));

    for (int id : new int[] {0, 3, 4, 5, 6, 7}) {
      assertThat(block(pair.initiatorMemory, id)).isEqualTo(block(localData, id));
    }
  }

  @Test
  void handleOfAPreparedTransferCountsTheBytesItMoves() {
    Pair pair = connectedPair();
    Prepared lists = prepareAll(pair);

    TransferHandle handle =
        pair.initiator.post(
            TransferOp.READ,
            lists.local,
            new int[] {0, 1, 2},
            lists.remote,
            new int[] {3, 4, 5},
            Optional.empty());

    assertThat(handle.bytes()).isEqualTo(3L * BLOCK_BYTES);
    assertDone(pair.initiator, handle);
  }

  @Test
  void notificationAttachedToAPreparedWriteArrivesOnlyAfterTheBytesAreVisible() {
    Pair pair = connectedPair();
    byte[] localData = randomBytes(REGION_BYTES);
    fill(pair.initiatorMemory, 0, localData);
    Prepared lists = prepareAll(pair);

    pair.initiator.post(
        TransferOp.WRITE,
        lists.local,
        new int[] {6},
        lists.remote,
        new int[] {2},
        Optional.of(new byte[] {4, 2}));

    List<Notification> arrived = awaitNotifications(pair.target, 1);
    assertThat(arrived).containsExactly(new Notification("initiator", new byte[] {4, 2}));
    assertThat(block(pair.targetMemory, 2)).isEqualTo(block(localData, 6));
  }

  @Test
  void indexOutsideAPreparedListIsRefusedBeforeAnyByteMoves() {
    Pair pair = connectedPair();
    byte[] localData = randomBytes(REGION_BYTES);
    fill(pair.initiatorMemory, 0, localData);
    Prepared lists = prepareAll(pair);

    for (int[] remoteIndices : new int[][] {{0, BLOCKS}, {0, -1}}) {
      assertThatThrownBy(
              () ->
                  pair.initiator.post(
                      TransferOp.READ,
                      lists.local,
                      new int[] {0, 1},
                      lists.remote,
                      remoteIndices,
                      Optional.empty()))
          .isInstanceOf(TransportException.class);
    }
    assertThatThrownBy(
            () ->
                pair.initiator.post(
                    TransferOp.READ,
                    lists.local,
                    new int[] {BLOCKS},
                    lists.remote,
                    new int[] {0},
                    Optional.empty()))
        .isInstanceOf(TransportException.class);
    assertThat(contents(pair.initiatorMemory, 0, REGION_BYTES)).isEqualTo(localData);
  }

  @Test
  void indexArraysOfDifferentLengthsAreRefused() {
    Pair pair = connectedPair();
    Prepared lists = prepareAll(pair);

    assertThatThrownBy(
            () ->
                pair.initiator.post(
                    TransferOp.READ,
                    lists.local,
                    new int[] {0, 1},
                    lists.remote,
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
                pair.initiator.post(
                    TransferOp.READ,
                    lists.local,
                    new int[0],
                    lists.remote,
                    new int[0],
                    Optional.empty()))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void preparedPiecesOfDifferentLengthsAreRefused() {
    Pair pair = connectedPair();
    KvMemory remote = pair.targetMemory;
    PreparedList local = pair.initiator.prepare(blocks(pair.initiatorMemory, 0));
    PreparedList halves =
        pair.initiator.prepare(
            "target",
            new DescriptorList(
                remote.kind(), List.of(new Descriptor(remote.address(), BLOCK_BYTES / 2, 0))));

    assertThatThrownBy(
            () ->
                pair.initiator.post(
                    TransferOp.READ, local, new int[] {0}, halves, new int[] {0}, Optional.empty()))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void preparingALocalListOutsideRegisteredMemoryIsRefused() {
    Pair pair = connectedPair();
    KvMemory local = pair.initiatorMemory;

    assertThatThrownBy(
            () ->
                pair.initiator.prepare(
                    new DescriptorList(local.kind(), List.of(pastTheEnd(local, 4096)))))
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
    KvMemory remote = pair.targetMemory;

    assertThatThrownBy(
            () ->
                pair.initiator.prepare(
                    "target", new DescriptorList(remote.kind(), List.of(pastTheEnd(remote, 4096)))))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void aRemoteListIsUnusableOnceItsPeerIsInvalidated() {
    Pair pair = connectedPair();
    Prepared lists = prepareAll(pair);

    pair.initiator.invalidateRemote("target");

    assertThatThrownBy(() -> readBlockZero(pair, lists)).isInstanceOf(TransportException.class);
  }

  @Test
  void aRemoteListIsUnusableOnceItsPeersMetadataIsLoadedAgain() {
    Pair pair = connectedPair();
    Prepared lists = prepareAll(pair);

    pair.initiator.loadRemoteMetadata(pair.target.localMetadata());

    assertThatThrownBy(() -> readBlockZero(pair, lists)).isInstanceOf(TransportException.class);
  }

  @Test
  void aRemoteListPreparedAgainAfterItsPeerWasReloadedIsUsable() {
    Pair pair = connectedPair();
    byte[] remoteData = randomBytes(REGION_BYTES);
    fill(pair.targetMemory, 0, remoteData);
    prepareAll(pair);
    pair.initiator.invalidateRemote("target");
    pair.initiator.loadRemoteMetadata(pair.target.localMetadata());

    Prepared fresh = prepareAll(pair);

    assertDone(pair.initiator, readBlockZero(pair, fresh));
    assertThat(block(pair.initiatorMemory, 0)).isEqualTo(block(remoteData, 0));
  }

  @Test
  void aLocalListIsUnusableOnceItsMemoryIsDeregistered() {
    Pair pair = connectedPair();
    Prepared lists = prepareAll(pair);

    pair.initiator.deregister(pair.initiatorMemory);

    assertThatThrownBy(() -> readBlockZero(pair, lists)).isInstanceOf(TransportException.class);
  }

  @Test
  void aReleasedListIsUnusable() {
    Pair pair = connectedPair();
    Prepared lists = prepareAll(pair);

    pair.initiator.release(lists.remote);

    assertThatThrownBy(() -> readBlockZero(pair, lists)).isInstanceOf(TransportException.class);
  }

  @Test
  void releasingAPreparedListTwiceIsHarmless() {
    Pair pair = connectedPair();
    Prepared lists = prepareAll(pair);
    pair.initiator.release(lists.local);

    assertThatCode(() -> pair.initiator.release(lists.local)).doesNotThrowAnyException();
  }

  @Test
  void listsOnTheWrongSideAreRefused() {
    Pair pair = connectedPair();
    Prepared lists = prepareAll(pair);

    assertThatThrownBy(
            () ->
                pair.initiator.post(
                    TransferOp.READ,
                    lists.remote,
                    new int[] {0},
                    lists.local,
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
                pair.initiator.post(
                    TransferOp.READ,
                    foreign,
                    new int[] {0},
                    lists.remote,
                    new int[] {0},
                    Optional.empty()))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void closedTransportRefusesToPostFromPreparedLists() {
    Pair pair = connectedPair();
    Prepared lists = prepareAll(pair);

    pair.initiator.close();

    assertThatThrownBy(() -> readBlockZero(pair, lists)).isInstanceOf(TransportException.class);
  }

  @Test
  void concurrentPreparedTransfersFromSeveralThreadsAllArriveIntact() throws Exception {
    Pair pair = connectedPair();
    byte[] remoteData = randomBytes(REGION_BYTES);
    fill(pair.targetMemory, 0, remoteData);
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
                        pair.initiator,
                        pair.initiator.post(
                            TransferOp.READ,
                            lists.local,
                            new int[] {id},
                            lists.remote,
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
      assertThat(block(pair.initiatorMemory, id)).isEqualTo(block(remoteData, BLOCKS - 1 - id));
    }
  }

  // ---- close ---------------------------------------------------------------------------------

  @Test
  void closedTransportRefusesToPost() {
    Pair pair = connectedPair();

    pair.initiator.close();

    assertThatThrownBy(
            () ->
                pair.initiator.post(
                    TransferOp.READ,
                    blocks(pair.initiatorMemory, 0),
                    "target",
                    blocks(pair.targetMemory, 0),
                    Optional.empty()))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void closedTransportRefusesToNotify() {
    Pair pair = connectedPair();

    pair.initiator.close();

    assertThatThrownBy(() -> pair.initiator.notify("target", new byte[] {1}))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void closingLeavesRegisteredMemoryUsableByItsOwner() {
    Transport t = transport("agent");
    KvMemory memory = registered(t);
    byte[] data = randomBytes(REGION_BYTES);

    t.close();
    fill(memory, 0, data);

    assertThat(contents(memory, 0, REGION_BYTES)).isEqualTo(data);
  }

  @Test
  void closingTwiceIsHarmless() {
    Transport t = transport("agent");
    t.close();

    assertThatCode(t::close).doesNotThrowAnyException();
  }

  @Test
  void aPeerCannotMoveBytesIntoAClosedAgent() {
    assumeTrue(
        closingRevokesPeerAccess(),
        "this transport does not revoke peers' access to memory when its agent closes");
    Pair pair = connectedPair();
    fill(pair.initiatorMemory, 0, randomBytes(REGION_BYTES));
    byte[] before = randomBytes(REGION_BYTES);
    fill(pair.targetMemory, 0, before);

    pair.target.close();

    TransferStatus outcome;
    try {
      TransferHandle handle =
          pair.initiator.post(
              TransferOp.WRITE,
              blocks(pair.initiatorMemory, 0),
              "target",
              blocks(pair.targetMemory, 0),
              Optional.empty());
      outcome = awaitSettled(pair.initiator, handle);
    } catch (TransportException refused) {
      outcome = new TransferStatus.Failed(refused.getMessage());
    }
    assertThat(outcome).isInstanceOf(TransferStatus.Failed.class);
    assertThat(contents(pair.targetMemory, 0, REGION_BYTES)).isEqualTo(before);
  }

  // ---- helpers for subclasses ----------------------------------------------------------------

  /** Creates an agent that is closed after the test. */
  protected final Transport transport(String agentName) {
    Transport t = newTransport(agentName);
    transports.add(t);
    return t;
  }

  /** Allocates a test region with {@code t}; closed after the test. */
  protected final KvMemory allocate(Transport t) {
    KvMemory memory = t.allocate(REGION_BYTES);
    memories.add(memory);
    return memory;
  }

  /** Allocates and registers a test region with {@code t}. */
  protected final KvMemory registered(Transport t) {
    KvMemory memory = allocate(t);
    t.register(memory);
    return memory;
  }

  /** An initiator and a target, each with a registered region; the initiator knows the target. */
  protected final Pair connectedPair() {
    Transport initiator = transport("initiator");
    KvMemory initiatorMemory = registered(initiator);
    Transport target = transport("target");
    KvMemory targetMemory = registered(target);
    assertThat(initiator.loadRemoteMetadata(target.localMetadata())).isEqualTo("target");
    return new Pair(initiator, initiatorMemory, target, targetMemory);
  }

  /**
   * Two agents of one test.
   *
   * @param initiator the agent that posts
   * @param initiatorMemory its registered region
   * @param target the agent it reaches (named {@code target})
   * @param targetMemory the target's registered region
   */
  protected record Pair(
      Transport initiator, KvMemory initiatorMemory, Transport target, KvMemory targetMemory) {}

  /** The descriptors of whole blocks of {@code memory}, in the order given. */
  protected static DescriptorList blocks(KvMemory memory, int... ids) {
    List<Descriptor> pieces = new ArrayList<>();
    for (int id : ids) {
      pieces.add(piece(memory, id));
    }
    return new DescriptorList(memory.kind(), pieces);
  }

  /** The descriptor of whole block {@code id} of {@code memory}. */
  protected static Descriptor piece(KvMemory memory, int id) {
    return new Descriptor(
        memory.address() + (long) id * BLOCK_BYTES, BLOCK_BYTES, memory.deviceId());
  }

  /** A block-sized descriptor that starts {@code gap} bytes past the end of {@code memory}. */
  private static Descriptor pastTheEnd(KvMemory memory, long gap) {
    return new Descriptor(
        memory.address() + memory.sizeBytes() + gap, BLOCK_BYTES, memory.deviceId());
  }

  /**
   * Every block of both regions of {@code pair}, prepared by its initiator.
   *
   * @param local the initiator's blocks, by block id
   * @param remote the target's blocks, by block id
   */
  protected record Prepared(PreparedList local, PreparedList remote) {}

  /** Prepares every block of both regions of {@code pair} with its initiator. */
  protected static Prepared prepareAll(Pair pair) {
    int[] all = IntStream.range(0, BLOCKS).toArray();
    return new Prepared(
        pair.initiator.prepare(blocks(pair.initiatorMemory, all)),
        pair.initiator.prepare("target", blocks(pair.targetMemory, all)));
  }

  /** Posts a READ of the target's block 0 into the initiator's block 0 from prepared lists. */
  private static TransferHandle readBlockZero(Pair pair, Prepared lists) {
    return pair.initiator.post(
        TransferOp.READ, lists.local, new int[] {0}, lists.remote, new int[] {0}, Optional.empty());
  }

  /** Waits until {@code handle} is no longer in progress and returns its final status. */
  protected final TransferStatus awaitSettled(Transport t, TransferHandle handle) {
    return await()
        .atMost(completionTimeout())
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(1))
        .until(() -> t.status(handle), s -> !(s instanceof TransferStatus.InProgress));
  }

  /** Waits until {@code handle} settles and asserts it is DONE. */
  protected final void assertDone(Transport t, TransferHandle handle) {
    assertThat(awaitSettled(t, handle)).isEqualTo(TransferStatus.DONE);
  }

  /** Drains {@code t} until at least {@code count} notifications arrived; returns all drained. */
  protected final List<Notification> awaitNotifications(Transport t, int count) {
    List<Notification> drained = new ArrayList<>();
    await()
        .atMost(completionTimeout())
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(1))
        .until(
            () -> {
              drained.addAll(t.drainNotifications());
              return drained.size() >= count;
            });
    return drained;
  }

  /** Random bytes from the seeded source. */
  protected final byte[] randomBytes(int n) {
    byte[] bytes = new byte[n];
    random.nextBytes(bytes);
    return bytes;
  }

  /** Writes {@code data} at {@code offset}. */
  protected static void fill(KvMemory memory, long offset, byte[] data) {
    memory.write(offset, ByteBuffer.wrap(data));
  }

  /** Reads {@code length} bytes at {@code offset}. */
  protected static byte[] contents(KvMemory memory, long offset, int length) {
    ByteBuffer dst = ByteBuffer.allocate(length);
    memory.read(offset, dst);
    return dst.array();
  }

  /** Block {@code id} of {@code memory}. */
  protected static byte[] block(KvMemory memory, int id) {
    return contents(memory, (long) id * BLOCK_BYTES, BLOCK_BYTES);
  }

  /** Block {@code id} of a region image. */
  protected static byte[] block(byte[] image, int id) {
    return Arrays.copyOfRange(image, id * BLOCK_BYTES, (id + 1) * BLOCK_BYTES);
  }
}
