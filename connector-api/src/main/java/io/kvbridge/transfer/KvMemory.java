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
