package io.kvbridge.nixl.memory;

import io.kvbridge.transfer.MemoryKind;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.Pointer;

/**
 * Zeroed host memory from the C heap ({@code calloc}), freed by {@link #close()}. Outside the Java
 * heap and outside JavaCPP's memory accounting: a KV cache may be far larger than either allows.
 *
 * <p>Threads: copies to disjoint ranges may run concurrently; {@link #close()} must not race with
 * them.
 */
public final class HostMemory implements NativeMemory {

  private final Pointer base;
  private final long size;
  private final AtomicBoolean open = new AtomicBoolean(true);

  private HostMemory(Pointer base, long size) {
    this.base = base;
    this.size = size;
  }

  /**
   * Allocates {@code sizeBytes} of zeroed host memory.
   *
   * @throws OutOfMemoryError if the C heap cannot provide it
   */
  public static HostMemory allocate(long sizeBytes) {
    if (sizeBytes <= 0) {
      throw new IllegalArgumentException("memory size must be positive, got " + sizeBytes);
    }
    Pointer base = Pointer.calloc(sizeBytes, 1);
    if (base == null || base.isNull()) {
      throw new OutOfMemoryError("calloc of " + sizeBytes + " bytes of host memory failed");
    }
    return new HostMemory(base, sizeBytes);
  }

  @Override
  public MemoryKind kind() {
    return MemoryKind.DRAM;
  }

  @Override
  public int deviceId() {
    return 0;
  }

  @Override
  public long address() {
    return base.address();
  }

  @Override
  public long sizeBytes() {
    return size;
  }

  @Override
  public boolean isOpen() {
    return open.get();
  }

  @Override
  public void write(long offset, ByteBuffer src) {
    int n = src.remaining();
    requireOpen();
    checkRange(offset, n);
    BytePointer dst = new BytePointer(NativeMemory.at(base.address() + offset));
    if (src.hasArray()) {
      dst.put(src.array(), src.arrayOffset() + src.position(), n);
      src.position(src.position() + n);
    } else {
      byte[] staged = new byte[n];
      src.get(staged);
      dst.put(staged, 0, n);
    }
  }

  @Override
  public void read(long offset, ByteBuffer dst) {
    int n = dst.remaining();
    requireOpen();
    checkRange(offset, n);
    BytePointer src = new BytePointer(NativeMemory.at(base.address() + offset));
    if (dst.hasArray()) {
      src.get(dst.array(), dst.arrayOffset() + dst.position(), n);
      dst.position(dst.position() + n);
    } else {
      byte[] staged = new byte[n];
      src.get(staged, 0, n);
      dst.put(staged);
    }
  }

  @Override
  public void close() {
    if (open.compareAndSet(true, false)) {
      Pointer.free(base);
    }
  }

  @Override
  public String toString() {
    return "HostMemory[" + size + " bytes at 0x" + Long.toHexString(base.address()) + "]";
  }

  private void requireOpen() {
    if (!open.get()) {
      throw new IllegalStateException(this + " was closed");
    }
  }
}
