package io.kvbridge.transfer;

import java.nio.ByteBuffer;

/**
 * Memory over a byte array the test keeps and may change, at a made-up address: for tests that
 * checksum, copy or resolve memory without a transport's.
 */
public final class ByteArrayMemory implements KvMemory {

  private final byte[] bytes;
  private final long address;
  private final MemoryKind kind;
  private final int device;

  /** Host memory at address 0 whose content is {@code bytes}, shared: changing one changes both. */
  public ByteArrayMemory(byte[] bytes) {
    this(bytes, 0, MemoryKind.DRAM, 0);
  }

  /** Memory of {@code kind} on {@code device} at {@code address}, over {@code bytes}, shared. */
  public ByteArrayMemory(byte[] bytes, long address, MemoryKind kind, int device) {
    this.bytes = bytes;
    this.address = address;
    this.kind = kind;
    this.device = device;
  }

  /** The array the memory is, shared. */
  public byte[] bytes() {
    return bytes;
  }

  @Override
  public MemoryKind kind() {
    return kind;
  }

  @Override
  public int deviceId() {
    return device;
  }

  @Override
  public long address() {
    return address;
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
