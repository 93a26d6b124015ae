package io.kvbridge.runtime.consumer;

import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.Transport;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;

/**
 * One consumer rank's staging area: memory from the rank's transport, registered with it beside the
 * KV memory, that staged reads land in before their rows are copied into place. Ranges are handed
 * out first fit, {@value #ALIGN}-byte aligned, and given back when a read's rows were copied or the
 * read was released; free neighbours join. The copy cost of this memory is measured once, when it
 * is allocated.
 *
 * <p>Threads: confined to the connector's lock.
 */
final class StagingArea implements AutoCloseable {

  static final int ALIGN = 64;

  private static final CopyCost UNMEASURED = new CopyCost(0, 0, 0);

  private final Transport transport;
  private final KvMemory memory;
  private final CopyCost copyCost;
  // Free ranges: offset -> length, never adjacent to each other.
  private final TreeMap<Long, Long> free = new TreeMap<>();
  private long reserved;

  private StagingArea(Transport transport, KvMemory memory, CopyCost copyCost) {
    this.transport = transport;
    this.memory = memory;
    this.copyCost = copyCost;
    free.put(0L, memory.sizeBytes());
  }

  /**
   * Allocates {@code bytes} from {@code transport}, measures its copies if {@code measure} (a
   * consumer that always or never stages needs no cost), and registers it.
   *
   * @throws io.kvbridge.transfer.TransportException if the transport cannot allocate or register
   *     it; nothing is held then
   */
  static StagingArea allocate(Transport transport, long bytes, boolean measure) {
    KvMemory memory = transport.allocate(bytes);
    try {
      CopyCost cost = measure ? CopyCost.measure(memory) : UNMEASURED;
      transport.register(memory);
      return new StagingArea(transport, memory, cost);
    } catch (RuntimeException e) {
      memory.close();
      throw e;
    }
  }

  KvMemory memory() {
    return memory;
  }

  /** What a copy costs on this memory; zero where it was not measured. */
  CopyCost copyCost() {
    return copyCost;
  }

  /** A descriptor of {@code length} bytes at {@code offset} of the area. */
  Descriptor descriptor(long offset, long length) {
    return new Descriptor(memory.address() + offset, length, memory.deviceId());
  }

  /** Reserves {@code bytes}: the offset of the range, or empty if no free range is large enough. */
  OptionalLong reserve(long bytes) {
    long size = align(bytes);
    for (Map.Entry<Long, Long> range : free.entrySet()) {
      if (range.getValue() >= size) {
        long at = range.getKey();
        free.remove(at);
        if (range.getValue() > size) {
          free.put(at + size, range.getValue() - size);
        }
        reserved += size;
        return OptionalLong.of(at);
      }
    }
    return OptionalLong.empty();
  }

  /** Gives back the range of {@code bytes} {@link #reserve} handed out at {@code offset}. */
  void release(long offset, long bytes) {
    long start = offset;
    long size = align(bytes);
    Map.Entry<Long, Long> before = free.floorEntry(offset);
    if (before != null && before.getKey() + before.getValue() > offset) {
      throw new IllegalStateException("staging range at " + offset + " is already free");
    }
    reserved -= size;
    if (before != null && before.getKey() + before.getValue() == offset) {
      start = before.getKey();
      size += before.getValue();
      free.remove(start);
    }
    Long after = free.get(offset + align(bytes));
    if (after != null) {
      free.remove(offset + align(bytes));
      size += after;
    }
    free.put(start, size);
  }

  /** The bytes reserved now. */
  long reservedBytes() {
    return reserved;
  }

  /** Deregisters and frees the memory; the caller released every read that lands in it first. */
  @Override
  public void close() {
    try {
      transport.deregister(memory);
    } finally {
      memory.close();
    }
  }

  private static long align(long bytes) {
    return (bytes + ALIGN - 1) / ALIGN * ALIGN;
  }
}
