package io.kvbridge.integrity;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.KvRegions;
import java.util.Arrays;
import java.util.List;
import java.util.zip.Checksum;

/**
 * The bytes a checksum covers, seen as one sequence: one range of one memory, or several ranges,
 * possibly of several memories (a block a consumer reassembles from the pieces its ranks read),
 * concatenated in order.
 *
 * <p>Immutable; reading it reads the memories at that moment.
 */
public final class ChecksumInput {

  /**
   * One range of the sequence.
   *
   * @param memory the memory it lies in
   * @param offset where in the memory
   * @param length how many bytes
   */
  public record Range(KvMemory memory, long offset, long length) {

    /** The {@code length} bytes at rank offset {@code rankOffset} of a rank's {@code regions}. */
    public static Range at(KvRegions regions, long rankOffset, long length) {
      return new Range(regions.regionAt(rankOffset), KvLayout.inRegion(rankOffset), length);
    }
  }

  private final List<Range> ranges;
  private final long[] starts;
  private final long length;

  private ChecksumInput(List<Range> ranges) {
    this.ranges = List.copyOf(ranges);
    this.starts = new long[this.ranges.size()];
    long at = 0;
    for (int i = 0; i < starts.length; i++) {
      starts[i] = at;
      at += this.ranges.get(i).length();
    }
    this.length = at;
  }

  /** The {@code length} bytes at {@code offset} of {@code memory}. */
  public static ChecksumInput of(KvMemory memory, long offset, long length) {
    return new ChecksumInput(List.of(new Range(memory, offset, length)));
  }

  /** {@code ranges}, concatenated in order. */
  public static ChecksumInput of(List<Range> ranges) {
    return new ChecksumInput(ranges);
  }

  /** The length of the sequence. */
  public long length() {
    return length;
  }

  /** Feeds bytes {@code [position, position + count)} of the sequence to {@code checksum}. */
  public void update(Checksum checksum, long position, long count) {
    if (position < 0 || count < 0 || position > length - count) {
      throw new IndexOutOfBoundsException(
          "[" + position + ", +" + count + ") is outside a sequence of " + length + " bytes");
    }
    int i = Arrays.binarySearch(starts, position);
    if (i < 0) {
      i = -i - 2;
    }
    long left = count;
    long at = position;
    while (left > 0) {
      Range r = ranges.get(i);
      long within = at - starts[i];
      long n = Math.min(left, r.length() - within);
      if (n > 0) {
        r.memory().update(checksum, r.offset() + within, n);
        left -= n;
        at += n;
      }
      i++;
    }
  }
}
