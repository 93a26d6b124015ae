package io.kvbridge.benchmarks.transfer;

import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
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
 * Offers the two things the bandwidth benchmarks time: a READ through the transport, and a plain
 * copy of the same bytes.
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
    fillRandom(prefillMemory);
    this.prefillName = decode.loadRemoteMetadata(prefill.localMetadata());
    this.local = shape.descriptors(decodeMemory);
    this.remote = shape.descriptors(prefillMemory);
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
    TransferHandle handle =
        decode.post(TransferOp.READ, local, prefillName, remote, Optional.empty());
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
    decode.deregister(decodeMemory);
    prefill.deregister(prefillMemory);
    decode.close();
    prefill.close();
    decodeMemory.close();
    prefillMemory.close();
  }

  private boolean sameBlock(int i) {
    return block(prefillMemory, i).mismatch(block(decodeMemory, i)) < 0;
  }

  private ByteBuffer block(KvMemory memory, int i) {
    ByteBuffer out = ByteBuffer.allocate(Math.toIntExact(shape.blockBytes()));
    memory.read(shape.offsetOf(i), out);
    return out.flip();
  }

  private static void fillRandom(KvMemory memory) {
    byte[] bytes = new byte[1 << 20];
    new SplittableRandom(42).nextBytes(bytes);
    ByteBuffer chunk = ByteBuffer.wrap(bytes);
    for (long offset = 0; offset < memory.sizeBytes(); offset += bytes.length) {
      chunk.clear().limit((int) Math.min(bytes.length, memory.sizeBytes() - offset));
      memory.write(offset, chunk);
    }
  }
}
