package io.kvbridge.tck.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.PreparedList;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;

/**
 * The agents and memory every transport test works with, created through the connector under test
 * and closed after each test (transports first), and the steps the tests take with them. Buffers
 * are small (a few blocks of {@value #BLOCK_BYTES} bytes) and the data is drawn from a seeded
 * {@link Random}, so a failure replays identically. Asynchronous completion is awaited by polling
 * {@link Transport#status} and {@link Transport#drainNotifications()}, bounded by {@link
 * ConnectorUnderTest#patience()}. The suite's groups extend it.
 */
public abstract class TransportFixture {

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

  /** The connector under test. */
  final ConnectorUnderTest underTest;

  /** Runs against {@code connector}, whose agents are the test's. */
  protected TransportFixture(ConnectorUnderTest connector) {
    this.underTest = Objects.requireNonNull(connector, "connector");
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

  /** A READ by {@code initiator} of agent {@code target}'s {@code remote} block 0 is refused. */
  void assertAReadFromTargetIsRefused(Transport initiator, KvMemory local, KvMemory remote) {
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

  /** Creates an agent that is closed after the test. */
  protected final Transport transport(String agentName) {
    Transport t = underTest.newTransport(agentName);
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
  static Descriptor pastTheEnd(KvMemory memory, long gap) {
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
        pair.initiator().prepare(blocks(pair.initiatorMemory(), all)),
        pair.initiator().prepare("target", blocks(pair.targetMemory(), all)));
  }

  /** Posts a READ of the target's block 0 into the initiator's block 0 from prepared lists. */
  static TransferHandle readBlockZero(Pair pair, Prepared lists) {
    return pair.initiator()
        .post(
            TransferOp.READ,
            lists.local(),
            new int[] {0},
            lists.remote(),
            new int[] {0},
            Optional.empty());
  }

  /** Waits until {@code handle} is no longer in progress and returns its final status. */
  protected final TransferStatus awaitSettled(Transport t, TransferHandle handle) {
    return await()
        .atMost(underTest.patience())
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
        .atMost(underTest.patience())
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
