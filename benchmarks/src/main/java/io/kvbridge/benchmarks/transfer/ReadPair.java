package io.kvbridge.benchmarks.transfer;

import io.kvbridge.fake.FakeFabric;
import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.nixl.MemoryMode;
import io.kvbridge.nixl.NixlBackend;
import io.kvbridge.nixl.NixlOptions;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.PreparedList;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * A decode agent that reads a prefill agent's blocks, both on one transport implementation, each
 * with one registered region of a {@link ReadShape}'s size; the prefill region holds random bytes.
 * Offers what the transfer benchmarks time: a READ through the transport, a plain copy of the same
 * bytes, and the content check a consumer runs on the blocks it read.
 *
 * <p>Threads: confined to one benchmark thread (the transport may copy on threads of its own).
 */
public final class ReadPair implements AutoCloseable {

  private final ReadShape shape;
  private final Transport decode;
  private final Transport prefill;
  private final KvMemory decodeMemory;
  private final KvMemory prefillMemory;
  private final DescriptorList local;
  private final DescriptorList remote;
  private final String prefillName;
  private ByteBuffer copyTarget;
  private boolean readDone;
  private PreparedList localList;
  private PreparedList remoteList;
  private int[] everyBlock;

  /**
   * Registers a region of {@code shape}'s size with each agent, fills prefill's and makes decode
   * load prefill's metadata. The pair owns both agents from here on.
   */
  public ReadPair(ReadShape shape, Transport decode, Transport prefill) {
    this.shape = shape;
    this.decode = decode;
    this.prefill = prefill;
    this.decodeMemory = decode.allocate(shape.totalBytes());
    this.prefillMemory = prefill.allocate(shape.totalBytes());
    decode.register(decodeMemory);
    prefill.register(prefillMemory);
    fillRandom(prefillMemory, 42);
    this.prefillName = decode.loadRemoteMetadata(prefill.localMetadata());
    this.local = shape.descriptors(decodeMemory);
    this.remote = shape.descriptors(prefillMemory);
  }

  /** Two agents on a fake fabric of their own: host memory on the Java heap. */
  public static ReadPair overFake(ReadShape shape) {
    FakeFabric fabric = new FakeFabric();
    return new ReadPair(shape, fabric.join("decode"), fabric.join("prefill"));
  }

  /**
   * Two NIXL agents in this JVM with host memory and the connector's default options, but for the
   * progress thread's delay. Needs the NIXL libraries and UCX transports that work over loopback.
   */
  public static ReadPair overNixlHostMemory(ReadShape shape, long progressDelayMicros) {
    NixlOptions defaults = NixlOptions.defaults();
    NixlOptions options =
        new NixlOptions(
            MemoryMode.DRAM,
            defaults.cudaDevice(),
            progressDelayMicros,
            defaults.backends(),
            defaults.backendParameters(),
            defaults.telemetry(),
            defaults.home(),
            defaults.pluginDir());
    return new ReadPair(
        shape, NixlBackend.transport("decode", options), NixlBackend.transport("prefill", options));
  }

  /** The shape of each request. */
  public ReadShape shape() {
    return shape;
  }

  /** How the caller waits for a posted READ. */
  public enum Polling {
    /** Polls {@code status} back to back, with {@link Thread#onSpinWait()} between polls. */
    SPIN,
    /** Parks {@value #PARK_NANOS} ns between polls, leaving the core to the transport's threads. */
    PARK;

    /** The pause between two polls of {@link #PARK}. */
    public static final long PARK_NANOS = 20_000;
  }

  /**
   * One READ request as a connector's worker side drives it: post, poll the status until DONE,
   * release.
   *
   * @throws TransportException if the transfer fails
   */
  public TransferHandle read(Polling polling) {
    return awaitDone(
        decode.post(TransferOp.READ, local, prefillName, remote, Optional.empty()), polling);
  }

  private TransferHandle awaitDone(TransferHandle handle, Polling polling) {
    TransferStatus status;
    while ((status = decode.status(handle)) instanceof TransferStatus.InProgress) {
      if (polling == Polling.SPIN) {
        Thread.onSpinWait();
      } else {
        LockSupport.parkNanos(Polling.PARK_NANOS);
      }
    }
    decode.release(handle);
    if (status instanceof TransferStatus.Failed failed) {
      throw new TransportException("READ " + handle.id() + " failed: " + failed.reason());
    }
    readDone = true;
    return handle;
  }

  /**
   * The same READ request from descriptor lists prepared once (on the first call, untimed by the
   * caller's warm-up): post by block indices, poll the status until DONE, release.
   *
   * @throws TransportException if the transfer fails
   */
  public TransferHandle readPrepared(Polling polling) {
    if (localList == null) {
      localList = decode.prepare(local);
      remoteList = decode.prepare(prefillName, remote);
      everyBlock = new int[shape.blocks()];
      for (int i = 0; i < everyBlock.length; i++) {
        everyBlock[i] = i;
      }
    }
    return awaitDone(
        decode.post(
            TransferOp.READ, localList, everyBlock, remoteList, everyBlock, Optional.empty()),
        polling);
  }

  /**
   * The floor a READ is measured against: the same blocks copied out of the prefill region with one
   * {@link ByteBuffer} bulk put each, into a heap buffer of the decode region's size at the same
   * offsets.
   */
  public ByteBuffer copy() {
    if (copyTarget == null) {
      copyTarget = ByteBuffer.allocate(Math.toIntExact(shape.totalBytes()));
    }
    ByteBuffer target = copyTarget;
    for (int i = 0; i < shape.blocks(); i++) {
      int offset = Math.toIntExact(shape.offsetOf(i));
      target.limit(offset + Math.toIntExact(shape.blockBytes())).position(offset);
      prefillMemory.read(offset, target);
    }
    return target;
  }

  /**
   * The checksum of each block in decode's region, in block order: what a consumer checks after a
   * READ, against what the producer recorded at grant ({@link #checksumsOfSource}).
   */
  public int[] checksumsOfRead(ChecksumScheme scheme) {
    return checksums(scheme, decodeMemory);
  }

  /** The checksum of each block in prefill's region: what a producer records at grant. */
  public int[] checksumsOfSource(ChecksumScheme scheme) {
    return checksums(scheme, prefillMemory);
  }

  /**
   * Whether every side that ran moved the right bytes: decode's region after a READ, the copy
   * target after a raw copy. A benchmark trial runs one of them, so only what ran is checked.
   */
  public boolean whatRanReproducedTheSource() {
    return (!readDone || decodeHoldsPrefillBytes())
        && (copyTarget == null || copyHoldsPrefillBytes());
  }

  /** Whether decode's region now holds exactly prefill's bytes (first and last block). */
  public boolean decodeHoldsPrefillBytes() {
    return sameBlock(0) && sameBlock(shape.blocks() - 1);
  }

  /** Whether the copy target holds exactly prefill's bytes (first and last block). */
  public boolean copyHoldsPrefillBytes() {
    if (copyTarget == null) {
      return false;
    }
    for (int i : new int[] {0, shape.blocks() - 1}) {
      int offset = Math.toIntExact(shape.offsetOf(i));
      ByteBuffer expected = block(prefillMemory, i);
      ByteBuffer actual =
          copyTarget
              .duplicate()
              .limit(offset + Math.toIntExact(shape.blockBytes()))
              .position(offset);
      if (expected.mismatch(actual) >= 0) {
        return false;
      }
    }
    return true;
  }

  @Override
  public void close() {
    if (localList != null) {
      decode.release(localList);
      decode.release(remoteList);
    }
    decode.deregister(decodeMemory);
    prefill.deregister(prefillMemory);
    decode.close();
    prefill.close();
    decodeMemory.close();
    prefillMemory.close();
  }

  private int[] checksums(ChecksumScheme scheme, KvMemory memory) {
    int[] out = new int[shape.blocks()];
    int blockBytes = Math.toIntExact(shape.blockBytes());
    for (int i = 0; i < out.length; i++) {
      out[i] = scheme.checksum(memory, shape.offsetOf(i), blockBytes);
    }
    return out;
  }

  private boolean sameBlock(int i) {
    return block(prefillMemory, i).mismatch(block(decodeMemory, i)) < 0;
  }

  private ByteBuffer block(KvMemory memory, int i) {
    ByteBuffer out = ByteBuffer.allocate(Math.toIntExact(shape.blockBytes()));
    memory.read(shape.offsetOf(i), out);
    return out.flip();
  }

  /** Fills {@code memory} with pseudo-random bytes drawn from {@code seed}. */
  static void fillRandom(KvMemory memory, int seed) {
    byte[] bytes = new byte[1 << 20];
    new SplittableRandom(seed).nextBytes(bytes);
    ByteBuffer chunk = ByteBuffer.wrap(bytes);
    for (long offset = 0; offset < memory.sizeBytes(); offset += bytes.length) {
      chunk.clear().limit((int) Math.min(bytes.length, memory.sizeBytes() - offset));
      memory.write(offset, chunk);
    }
  }
}
