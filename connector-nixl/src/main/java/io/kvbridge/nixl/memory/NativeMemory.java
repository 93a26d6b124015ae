package io.kvbridge.nixl.memory;

import io.kvbridge.transfer.KvMemory;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bytedeco.javacpp.Pointer;

/**
 * KV memory at a real address that NIXL can register: host memory ({@link HostMemory}) or CUDA
 * device memory ({@link DeviceMemory}). {@link #address()} is the pointer descriptors use.
 *
 * <p>Threads: copies to disjoint ranges may run concurrently; {@link #close()} must not race with
 * them.
 */
public abstract sealed class NativeMemory implements KvMemory permits HostMemory, DeviceMemory {

  private final Pointer base;
  private final long size;
  private final AtomicBoolean open = new AtomicBoolean(true);

  NativeMemory(Pointer base, long size) {
    this.base = base;
    this.size = size;
  }

  /** A JavaCPP pointer to an absolute address, for calls that take one. */
  static Pointer at(long absolute) {
    return new Pointer() {
      {
        address = absolute;
      }
    };
  }

  @Override
  public final long address() {
    return base.address();
  }

  @Override
  public final long sizeBytes() {
    return size;
  }

  /** Whether {@link #close()} has not been called yet. */
  public final boolean isOpen() {
    return open.get();
  }

  @Override
  public final void write(long offset, ByteBuffer src) {
    int n = src.remaining();
    checkCopy(offset, n);
    if (n > 0) {
      copyIn(address() + offset, src, n);
    }
  }

  @Override
  public final void read(long offset, ByteBuffer dst) {
    int n = dst.remaining();
    checkCopy(offset, n);
    if (n > 0) {
      copyOut(address() + offset, dst, n);
    }
  }

  /** Frees the memory once; later calls do nothing. */
  @Override
  public final void close() {
    if (open.compareAndSet(true, false)) {
      free(base);
    }
  }

  /** Copies {@code n} bytes of {@code src} to {@code address}, advancing {@code src}. */
  abstract void copyIn(long address, ByteBuffer src, int n);

  /** Copies {@code n} bytes at {@code address} into {@code dst}, advancing {@code dst}. */
  abstract void copyOut(long address, ByteBuffer dst, int n);

  /** Gives the memory back to its allocator. */
  abstract void free(Pointer base);

  /** Throws unless this memory and {@code other} (which may be this one) are both open. */
  final void requireOpen(NativeMemory other) {
    if (!isOpen() || !other.isOpen()) {
      throw new IllegalStateException((isOpen() ? other : this) + " was closed");
    }
  }

  private void checkCopy(long offset, int n) {
    requireOpen(this);
    checkRange(offset, n);
  }
}
