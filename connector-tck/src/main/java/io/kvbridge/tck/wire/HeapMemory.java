package io.kvbridge.tck.wire;

import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import java.nio.ByteBuffer;

/** Host memory on the Java heap, for computing the checksums of the vectors. Not thread-safe. */
final class HeapMemory implements KvMemory {

  private final ByteBuffer bytes;

  private HeapMemory(ByteBuffer bytes) {
    this.bytes = bytes;
  }

  /** {@code size} bytes, byte {@code i} being {@code i % 251}. */
  static HeapMemory counting(int size) {
    ByteBuffer bytes = ByteBuffer.allocate(size);
    for (int i = 0; i < size; i++) {
      bytes.put(i, (byte) (i % 251));
    }
    return new HeapMemory(bytes);
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
    return 0;
  }

  @Override
  public long sizeBytes() {
    return bytes.capacity();
  }

  @Override
  public void write(long offset, ByteBuffer src) {
    checkRange(offset, src.remaining());
    bytes.put((int) offset, src, src.position(), src.remaining());
    src.position(src.limit());
  }

  @Override
  public void read(long offset, ByteBuffer dst) {
    checkRange(offset, dst.remaining());
    int n = dst.remaining();
    dst.put(dst.position(), bytes, (int) offset, n);
    dst.position(dst.position() + n);
  }

  @Override
  public void close() {}
}
