package io.kvbridge.transfer;

import java.nio.ByteBuffer;
import java.util.zip.Checksum;

/**
 * A contiguous range of memory that holds KV blocks and can be registered with a {@link Transport}.
 * The worker side owns it; the engine reads and writes blocks through it.
 *
 * <p>{@link #address()} is the address descriptors refer to: a real pointer for native memory, a
 * transport-defined virtual address for in-JVM memory. {@link #write} and {@link #read} copy
 * between the Java heap and this memory (across the PCIe bus for device memory).
 *
 * <p>Threads: copies to disjoint ranges may run concurrently; {@link #close()} must not race with
 * anything else.
 */
public interface KvMemory extends AutoCloseable {

  /** Host or device memory. */
  MemoryKind kind();

  /** The device the memory lives on (0 for host memory). */
  int deviceId();

  /** The base address descriptors use. */
  long address();

  /** The size in bytes. */
  long sizeBytes();

  /** Copies {@code src.remaining()} bytes to {@code offset}; advances {@code src}. */
  void write(long offset, ByteBuffer src);

  /** Copies {@code dst.remaining()} bytes from {@code offset}; advances {@code dst}. */
  void read(long offset, ByteBuffer dst);

  /**
   * Feeds the {@code length} bytes at {@code offset} to {@code checksum}. This default copies them
   * through a small heap buffer with {@link #read}; memory the JVM can address directly reads them
   * in place instead.
   */
  default void update(Checksum checksum, long offset, long length) {
    checkRange(offset, length);
    ByteBuffer chunk = ByteBuffer.allocate((int) Math.min(length, 64 * 1024));
    for (long done = 0; done < length; ) {
      int n = (int) Math.min(chunk.capacity(), length - done);
      chunk.clear().limit(n);
      read(offset + done, chunk);
      checksum.update(chunk.flip());
      done += n;
    }
  }

  /**
   * Copies {@code rows} rows of {@code width} bytes from this memory into {@code target}: row
   * {@code i} from {@code offset + i * pitch} to {@code targetOffset + i * targetPitch} (the shape
   * of CUDA's {@code cudaMemcpy2D}). This default copies row by row through a heap buffer with
   * {@link #read} and {@link #write}; memory that can copy in place (the same kind on both sides)
   * overrides it. The ranges must not overlap.
   *
   * @throws IndexOutOfBoundsException if a row lies outside either memory; nothing is copied then
   */
  default void copyRows(
      long offset,
      long pitch,
      KvMemory target,
      long targetOffset,
      long targetPitch,
      int width,
      int rows) {
    checkRows(offset, pitch, width, rows);
    target.checkRows(targetOffset, targetPitch, width, rows);
    ByteBuffer row = ByteBuffer.allocate(width);
    for (int i = 0; i < rows; i++) {
      read(offset + i * pitch, row.clear());
      target.write(targetOffset + i * targetPitch, row.flip());
    }
  }

  /**
   * Throws unless {@code rows} rows of {@code width} bytes, {@code pitch} apart from {@code
   * offset}, lie inside this memory.
   */
  default void checkRows(long offset, long pitch, int width, int rows) {
    if (rows < 0 || width < 0 || (rows > 1 && pitch < width)) {
      throw new IndexOutOfBoundsException(
          rows + " rows of " + width + " bytes cannot lie " + pitch + " bytes apart");
    }
    if (rows > 0) {
      checkRange(offset, (rows - 1) * pitch + width);
    }
  }

  /** Frees the memory. The caller deregisters it from every transport first. */
  @Override
  void close();

  /** Throws unless {@code [offset, offset + length)} lies inside this memory. */
  default void checkRange(long offset, long length) {
    if (offset < 0 || length < 0 || offset > sizeBytes() - length) {
      throw new IndexOutOfBoundsException(
          "range [" + offset + ", +" + length + ") is outside memory of " + sizeBytes() + " bytes");
    }
  }
}
