package io.kvbridge.fake;

import java.nio.ByteBuffer;

/** A range of bytes a transfer copies from or into: local memory, or a peer's region. */
interface Bytes {

  /**
   * A buffer over {@code [offset, offset + length)}, positioned at its start; independent of other
   * views, so concurrent copies to disjoint ranges do not interfere.
   *
   * @throws IllegalStateException if the memory is gone
   */
  ByteBuffer view(long offset, long length);

  /** Copies {@code length} bytes from {@code src} at {@code srcOffset} to {@code dst}. */
  static void copy(Bytes src, long srcOffset, Bytes dst, long dstOffset, long length) {
    dst.view(dstOffset, length).put(src.view(srcOffset, length));
  }
}
