package io.kvbridge.integrity;

import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import java.nio.ByteBuffer;

/** Host memory over a byte array the test keeps and changes, for checksum tests. */
final class ByteArrayMemory implements KvMemory {

  private final byte[] bytes;

  /** Memory whose content is {@code bytes}, shared: changing the array changes the memory. */
  ByteArrayMemory(byte[] bytes) {
    this.bytes = bytes;
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
    return bytes.length;
  }

  @Override
  public void write(long offset, ByteBuffer src) {
    checkRange(offset, src.remaining());
    src.get(bytes, (int) offset, src.remaining());
  }

  @Override
  public void read(long offset, ByteBuffer dst) {
    checkRange(offset, dst.remaining());
    dst.put(bytes, (int) offset, dst.remaining());
  }

  @Override
  public void close() {}
}
