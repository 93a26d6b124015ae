package io.kvbridge.fake;

import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import java.nio.ByteBuffer;
import java.util.zip.Checksum;

/**
 * Host memory of a fake agent: a {@link ByteBuffer} at a synthetic address the fabric handed out.
 * Addresses of one fabric never overlap, so a descriptor names at most one region.
 *
 * <p>Threads: copies to disjoint ranges may run concurrently (each works on its own view of the
 * buffer); {@link #close()} makes later copies fail with {@link IllegalStateException}.
 */
final class FakeMemory implements KvMemory, Bytes {

  private final FakeFabric fabric;
  private final long address;
  private final long sizeBytes;
  private final String fileName;
  private final Runnable onClose;
  private volatile ByteBuffer buffer;

  FakeMemory(
      FakeFabric fabric, long address, ByteBuffer buffer, String fileName, Runnable onClose) {
    this.fabric = fabric;
    this.address = address;
    this.sizeBytes = buffer.capacity();
    this.buffer = buffer;
    this.fileName = fileName;
    this.onClose = onClose;
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
    return address;
  }

  @Override
  public long sizeBytes() {
    return sizeBytes;
  }

  @Override
  public void write(long offset, ByteBuffer src) {
    checkRange(offset, src.remaining());
    // Absolute bulk copies: no view of the memory per call, and the memory's own position and
    // limit are never touched, so copies to other ranges may run at the same time.
    int length = src.remaining();
    live().put((int) offset, src, src.position(), length);
    src.position(src.position() + length);
  }

  @Override
  public void read(long offset, ByteBuffer dst) {
    checkRange(offset, dst.remaining());
    int length = dst.remaining();
    dst.put(dst.position(), live(), (int) offset, length);
    dst.position(dst.position() + length);
  }

  /** Copies in place, one absolute bulk copy per row, when {@code target} is fake memory too. */
  @Override
  public void copyRows(
      long offset,
      long pitch,
      KvMemory target,
      long targetOffset,
      long targetPitch,
      int width,
      int rows) {
    if (!(target instanceof FakeMemory into)) {
      KvMemory.super.copyRows(offset, pitch, target, targetOffset, targetPitch, width, rows);
      return;
    }
    checkRows(offset, pitch, width, rows);
    into.checkRows(targetOffset, targetPitch, width, rows);
    ByteBuffer from = live();
    ByteBuffer to = into.live();
    for (int i = 0; i < rows; i++) {
      to.put((int) (targetOffset + i * targetPitch), from, (int) (offset + i * pitch), width);
    }
  }

  @Override
  public void update(Checksum checksum, long offset, long length) {
    checkRange(offset, length);
    checksum.update(view(offset, length));
  }

  @Override
  public void close() {
    if (buffer != null) {
      buffer = null;
      onClose.run();
    }
  }

  @Override
  public ByteBuffer view(long offset, long length) {
    return live().duplicate().limit((int) (offset + length)).position((int) offset);
  }

  private ByteBuffer live() {
    ByteBuffer current = buffer;
    if (current == null) {
      throw new IllegalStateException(
          "memory at 0x" + Long.toHexString(address) + " was closed by its owner");
    }
    return current;
  }

  /** The fabric whose address space this memory belongs to. */
  FakeFabric fabric() {
    return fabric;
  }

  /** The file that backs this memory in shared-directory mode; empty for heap memory. */
  String fileName() {
    return fileName;
  }

  boolean isClosed() {
    return buffer == null;
  }

  @Override
  public String toString() {
    return "FakeMemory[0x" + Long.toHexString(address) + ", " + sizeBytes + " bytes]";
  }
}
