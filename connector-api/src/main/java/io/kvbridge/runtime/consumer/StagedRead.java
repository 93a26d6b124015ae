package io.kvbridge.runtime.consumer;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.KvRegions;

/**
 * A READ that lands in a range of a consumer rank's staging area: the range it holds, and the
 * copies ({@link TransferPlanner.Scatter}) that put the staged rows into the rank's KV memory once
 * the READ is done. The range is given back once, after the copies or when the read is released.
 *
 * <p>Threads: confined to the connector's lock.
 */
final class StagedRead {

  private final StagingArea area;
  private final long offset;
  private final long bytes;
  private TransferPlanner.Scatter scatter;
  private boolean held = true;

  StagedRead(StagingArea area, long offset, long bytes) {
    this.area = area;
    this.offset = offset;
    this.bytes = bytes;
  }

  /** The bytes of the range. */
  long bytes() {
    return bytes;
  }

  /** A descriptor of {@code length} bytes at {@code offset} of the range. */
  Descriptor descriptor(long offset, long length) {
    if (offset < 0 || length < 0 || offset > bytes - length) {
      throw new IllegalArgumentException(
          "staged piece [" + offset + ", +" + length + ") lies outside its range of " + bytes);
    }
    return area.descriptor(this.offset + offset, length);
  }

  /** The staging memory the range lies in. */
  KvMemory memory() {
    return area.memory();
  }

  /** Sets the copies that finish the read: the planner's scatter of the pair. */
  void scatter(TransferPlanner.Scatter copies) {
    this.scatter = copies;
  }

  /**
   * Copies the staged rows into {@code kv}, the rank's KV memory, then gives the range back.
   *
   * @throws IllegalStateException if the range was given back already
   */
  void scatterInto(KvRegions kv) {
    if (!held) {
      throw new IllegalStateException("the staged read's range was given back before its copies");
    }
    KvMemory from = area.memory();
    for (int i = 0; i < scatter.copyCount(); i++) {
      long target = scatter.target(i);
      from.copyRows(
          offset + scatter.source(i),
          scatter.sourcePitch(),
          kv.regionAt(target),
          KvLayout.inRegion(target),
          scatter.targetPitch(),
          scatter.width(),
          scatter.rows(i));
    }
    release();
  }

  /** Whether the range is still held: the copies have not run and the read was not released. */
  boolean held() {
    return held;
  }

  /** Gives the range back, once; later calls do nothing. */
  void release() {
    if (held) {
      held = false;
      area.release(offset, bytes);
    }
  }
}
