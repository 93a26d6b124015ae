package io.kvbridge.nixl.memory;

import io.kvbridge.transfer.KvMemory;
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

  /**
   * Copies in place when {@code target} is host memory too: one direct buffer over each side's
   * rows, then one absolute bulk copy per row (no native call per row).
   */
  @Override
  public void copyRows(
      long offset,
      long pitch,
      KvMemory target,
      long targetOffset,
      long targetPitch,
      int width,
      int rows) {
    checkRows(offset, pitch, width, rows);
    target.checkRows(targetOffset, targetPitch, width, rows);
    long span = (rows - 1) * pitch + width;
    long targetSpan = (rows - 1) * targetPitch + width;
    if (!(target instanceof HostMemory into)
        || rows == 0
        || span > Integer.MAX_VALUE
        || targetSpan > Integer.MAX_VALUE) {
      super.copyRows(offset, pitch, target, targetOffset, targetPitch, width, rows);
      return;
    }
    requireOpen(into);
    ByteBuffer from = new BytePointer(at(address() + offset)).capacity(span).asByteBuffer();
    ByteBuffer to =
        new BytePointer(at(into.address() + targetOffset)).capacity(targetSpan).asByteBuffer();
    for (int i = 0; i < rows; i++) {
      to.put((int) (i * targetPitch), from, (int) (i * pitch), width);
    }
  }

  /** Reads the bytes in place, through a direct buffer over the C heap. */
  @Override
  public void update(Checksum checksum, long offset, long length) {
    checkRange(offset, length);
    requireOpen(this);
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
