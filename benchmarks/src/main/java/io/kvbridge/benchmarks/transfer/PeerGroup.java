package io.kvbridge.benchmarks.transfer;

import io.kvbridge.fake.FakeFabric;
import io.kvbridge.nixl.MemoryMode;
import io.kvbridge.nixl.NixlBackend;
import io.kvbridge.nixl.NixlOptions;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.function.Function;

/**
 * Several READs at once between one agent and {@code peers} others, one READ of a {@link ReadShape}
 * per peer: either one decode agent reading from {@code peers} prefill agents, each into its own
 * slice of one region ({@link Direction#ONE_DECODE_MANY_PREFILLS}), or {@code peers} decode agents
 * reading the same prefill region ({@link Direction#ONE_PREFILL_MANY_DECODES}). A request posts
 * every READ before it polls any, so the transfers overlap as far as the transport lets them.
 *
 * <p>Threads: confined to one benchmark thread (the transport may copy on threads of its own).
 */
public final class PeerGroup implements AutoCloseable {

  /** Which side of the READs is one agent. */
  public enum Direction {
    /** One decode agent reads from every prefill agent at once. */
    ONE_DECODE_MANY_PREFILLS,
    /** Every decode agent reads from the one prefill agent at once. */
    ONE_PREFILL_MANY_DECODES
  }

  private final ReadShape shape;
  private final List<Transport> agents = new ArrayList<>();
  private final List<KvMemory> memories = new ArrayList<>();
  // Per READ: who posts it, the peer's name as the poster knows it, and both descriptor lists.
  private final Transport[] posters;
  private final String[] sources;
  private final DescriptorList[] locals;
  private final DescriptorList[] remotes;
  private final TransferHandle[] handles;
  // Per READ: where its bytes come from and go to, for the check after the benchmark.
  private final KvMemory[] sourceMemories;
  private final KvMemory[] targetMemories;
  private final long[] targetOffsets;

  private PeerGroup(
      ReadShape shape, int peers, Direction direction, Function<String, Transport> agent) {
    this.shape = shape;
    posters = new Transport[peers];
    sources = new String[peers];
    locals = new DescriptorList[peers];
    remotes = new DescriptorList[peers];
    handles = new TransferHandle[peers];
    sourceMemories = new KvMemory[peers];
    targetMemories = new KvMemory[peers];
    targetOffsets = new long[peers];
    long total = shape.totalBytes();
    if (direction == Direction.ONE_DECODE_MANY_PREFILLS) {
      Transport decode = join(agent, "decode");
      KvMemory target = register(decode, total * peers);
      for (int p = 0; p < peers; p++) {
        Transport prefill = join(agent, "prefill-" + p);
        KvMemory source = register(prefill, total);
        fillRandom(source, p);
        read(
            p,
            decode,
            target,
            p * total,
            decode.loadRemoteMetadata(prefill.localMetadata()),
            source);
      }
    } else {
      Transport prefill = join(agent, "prefill");
      KvMemory source = register(prefill, total);
      fillRandom(source, 0);
      for (int p = 0; p < peers; p++) {
        Transport decode = join(agent, "decode-" + p);
        KvMemory target = register(decode, total);
        read(p, decode, target, 0, decode.loadRemoteMetadata(prefill.localMetadata()), source);
      }
    }
  }

  /** Agents on one fake fabric: host memory on the Java heap. */
  public static PeerGroup overFake(ReadShape shape, int peers, Direction direction) {
    FakeFabric fabric = new FakeFabric();
    return new PeerGroup(shape, peers, direction, fabric::join);
  }

  /** NIXL agents in this JVM with host memory and the connector's default options. */
  public static PeerGroup overNixlHostMemory(ReadShape shape, int peers, Direction direction) {
    NixlOptions options = NixlOptions.defaults().withMemory(MemoryMode.DRAM);
    return new PeerGroup(shape, peers, direction, name -> NixlBackend.transport(name, options));
  }

  /** Bytes one request moves: one shape per peer. */
  public long bytesPerRequest() {
    return shape.totalBytes() * posters.length;
  }

  /**
   * One request: every READ posted, then each polled until DONE (spinning) and released.
   *
   * @throws TransportException if a transfer fails
   */
  public void readAll() {
    for (int p = 0; p < posters.length; p++) {
      handles[p] =
          posters[p].post(TransferOp.READ, locals[p], sources[p], remotes[p], Optional.empty());
    }
    for (int p = 0; p < posters.length; p++) {
      TransferStatus status;
      while ((status = posters[p].status(handles[p])) instanceof TransferStatus.InProgress) {
        Thread.onSpinWait();
      }
      posters[p].release(handles[p]);
      if (status instanceof TransferStatus.Failed failed) {
        throw new TransportException("READ " + handles[p].id() + " failed: " + failed.reason());
      }
    }
  }

  /** Whether every READ's target holds its source's bytes. */
  public boolean everyTargetHoldsItsSource() {
    int size = Math.toIntExact(shape.totalBytes());
    for (int p = 0; p < posters.length; p++) {
      ByteBuffer expected = ByteBuffer.allocate(size);
      ByteBuffer actual = ByteBuffer.allocate(size);
      sourceMemories[p].read(0, expected);
      targetMemories[p].read(targetOffsets[p], actual);
      if (expected.flip().mismatch(actual.flip()) >= 0) {
        return false;
      }
    }
    return true;
  }

  @Override
  public void close() {
    for (int i = 0; i < agents.size(); i++) {
      agents.get(i).deregister(memories.get(i));
    }
    agents.forEach(Transport::close);
    memories.forEach(KvMemory::close);
  }

  private Transport join(Function<String, Transport> agent, String name) {
    Transport transport = agent.apply(name);
    agents.add(transport);
    memories.add(null);
    return transport;
  }

  private KvMemory register(Transport transport, long bytes) {
    KvMemory memory = transport.allocate(bytes);
    transport.register(memory);
    memories.set(agents.indexOf(transport), memory);
    return memory;
  }

  private void read(
      int p, Transport decode, KvMemory target, long offset, String source, KvMemory from) {
    posters[p] = decode;
    sources[p] = source;
    locals[p] = descriptors(target, offset);
    remotes[p] = descriptors(from, 0);
    sourceMemories[p] = from;
    targetMemories[p] = target;
    targetOffsets[p] = offset;
  }

  private DescriptorList descriptors(KvMemory memory, long base) {
    List<Descriptor> pieces = new ArrayList<>(shape.blocks());
    for (int i = 0; i < shape.blocks(); i++) {
      pieces.add(
          new Descriptor(
              memory.address() + base + shape.offsetOf(i), shape.blockBytes(), memory.deviceId()));
    }
    return new DescriptorList(memory.kind(), pieces);
  }

  private static void fillRandom(KvMemory memory, int seed) {
    byte[] bytes = new byte[1 << 20];
    new SplittableRandom(42 + seed).nextBytes(bytes);
    ByteBuffer chunk = ByteBuffer.wrap(bytes);
    for (long offset = 0; offset < memory.sizeBytes(); offset += bytes.length) {
      chunk.clear().limit((int) Math.min(bytes.length, memory.sizeBytes() - offset));
      memory.write(offset, chunk);
    }
  }
}
