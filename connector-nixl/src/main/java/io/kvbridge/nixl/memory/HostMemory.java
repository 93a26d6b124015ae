package io.kvbridge.nixl.memory;

import io.kvbridge.transfer.MemoryKind;
import java.nio.ByteBuffer;
import java.util.zip.Checksum;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.Pointer;

/**
 * Zeroed host memory from the C heap ({@code calloc}), freed by {@link #close()}. Outside the Java
 * heap and outside JavaCPP's memory accounting: a KV cache may be far larger than either allows.
 */
public final class HostMemory extends NativeMemory {

  private HostMemory(Pointer base, long size) {
    super(base, size);
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
  void copyIn(long address, ByteBuffer src, int n) {
    BytePointer dst = new BytePointer(at(address));
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
  void copyOut(long address, ByteBuffer dst, int n) {
    BytePointer src = new BytePointer(at(address));
    if (dst.hasArray()) {
      src.get(dst.array(), dst.arrayOffset() + dst.position(), n);
      dst.position(dst.position() + n);
    } else {
      byte[] staged = new byte[n];
      src.get(staged, 0, n);
      dst.put(staged);
    }
  }

  /** Reads the bytes in place, through a direct buffer over the C heap. */
  @Override
  public void update(Checksum checksum, long offset, long length) {
    checkRange(offset, length);
    if (!isOpen()) {
      throw new IllegalStateException(this + " was closed");
    }
    for (long done = 0; done < length; ) {
      int n = (int) Math.min(Integer.MAX_VALUE, length - done);
      checksum.update(new BytePointer(at(address() + offset + done)).capacity(n).asByteBuffer());
      done += n;
    }
  }

  @Override
  void free(Pointer base) {
    Pointer.free(base);
  }

  @Override
  public String toString() {
    return "HostMemory[" + sizeBytes() + " bytes at 0x" + Long.toHexString(address()) + "]";
  }
}
