package io.kvbridge.sample.engine;

import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import java.nio.ByteBuffer;
import java.util.Arrays;

/** KV memory on the Java heap, for tests of the pool that need no transport. */
final class HeapKvMemory implements KvMemory {

  private final byte[] bytes;

  HeapKvMemory(int size) {
    this.bytes = new byte[size];
  }

  /** A copy of {@code length} bytes from {@code offset}. */
  byte[] bytes(long offset, int length) {
    checkRange(offset, length);
    return Arrays.copyOfRange(bytes, (int) offset, (int) offset + length);
  }

  /** Flips one bit of the byte at {@code offset}, as a corrupted transfer would. */
  void flipBit(long offset) {
    bytes[(int) offset] ^= 0x01;
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
