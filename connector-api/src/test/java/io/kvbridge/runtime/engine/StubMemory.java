package io.kvbridge.runtime.engine;

import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import java.nio.ByteBuffer;

/**
 * Memory that is only an address range, reading as zeros and refusing writes: for tests that plan,
 * post and answer but move no bytes.
 */
public record StubMemory(long address, long sizeBytes) implements KvMemory {
  @Override
  public MemoryKind kind() {
    return MemoryKind.DRAM;
  }

  @Override
  public int deviceId() {
    return 0;
  }

  @Override
  public void write(long offset, ByteBuffer src) {
    throw new UnsupportedOperationException();
  }

  @Override
  public void read(long offset, ByteBuffer dst) {
    while (dst.hasRemaining()) {
      dst.put((byte) 0);
    }
  }

  @Override
  public void close() {}
}
