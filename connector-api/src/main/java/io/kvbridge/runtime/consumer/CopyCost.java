package io.kvbridge.runtime.consumer;

import io.kvbridge.transfer.KvMemory;

/**
 * What a local copy of rows costs on one kind of memory ({@link KvMemory#copyRows}): a fixed cost
 * per call, a cost per row and a cost per byte, in nanoseconds. Measured on the memory itself by
 * {@link #measure}: a staging area measures its own copies when it is allocated.
 *
 * @param nanosPerCopy what each call adds
 * @param nanosPerRow what each row adds
 * @param nanosPerByte what each byte adds
 */
public record CopyCost(double nanosPerCopy, double nanosPerRow, double nanosPerByte) {

  /** The fewest bytes {@link #measure} needs: a source and a target of 1 MiB each. */
  public static final long MEASURE_BYTES = 2L << 20;

  /**
   * The most {@link #measure} copies: a source and a target of 64 MiB each, larger than a core's
   * caches, so a byte costs what it costs the scatter of a real read.
   */
  public static final long MEASURE_MOST_BYTES = 128L << 20;

  private static final int MIB = 1 << 20;
  private static final int SMALL_ROW = 256;
  private static final int CALLS = 4096;
  private static final int ROUNDS = 2;

  public CopyCost {
    if (!(nanosPerCopy >= 0) || !(nanosPerRow >= 0) || !(nanosPerByte >= 0)) {
      throw new IllegalArgumentException(
          "a copy's costs must be 0 or more, got "
              + nanosPerCopy
              + ", "
              + nanosPerRow
              + " and "
              + nanosPerByte);
    }
  }

  /** What {@code copies} calls moving {@code rows} rows of {@code bytes} in all cost. */
  public double nanos(long copies, long rows, long bytes) {
    return copies * nanosPerCopy + rows * nanosPerRow + bytes * nanosPerByte;
  }

  /**
   * Measures copies within the first bytes of {@code memory} (which it overwrites): two halves of
   * up to 64 MiB each ({@value #MEASURE_MOST_BYTES} in all, or half the memory, in whole MiB), the
   * best of {@value #ROUNDS} rounds of each: 4,096 calls of one 256-byte row (what a call costs
   * beyond its row); one call of a half's worth of such rows, a pitch apart on both sides (what a
   * row costs beyond its bytes); and one call of the half in rows of 1 MiB (what a byte costs).
   * Each cost is at least 0. Memory smaller than the caches measures a byte cheaper than a real
   * read's scatter pays.
   *
   * @throws IllegalArgumentException if the memory is smaller than {@value #MEASURE_BYTES}
   */
  public static CopyCost measure(KvMemory memory) {
    if (memory.sizeBytes() < MEASURE_BYTES) {
      throw new IllegalArgumentException(
          "measuring copies needs " + MEASURE_BYTES + " bytes, got " + memory.sizeBytes());
    }
    int half = (int) (Math.min(memory.sizeBytes(), MEASURE_MOST_BYTES) / 2 / MIB * MIB);
    int smallRows = half / SMALL_ROW;
    int largeRows = half / MIB;
    long calls = Long.MAX_VALUE;
    long rows = Long.MAX_VALUE;
    long bytes = Long.MAX_VALUE;
    for (int round = 0; round < ROUNDS; round++) {
      long start = System.nanoTime();
      for (int i = 0; i < CALLS; i++) {
        long at = (long) i * SMALL_ROW;
        memory.copyRows(at, SMALL_ROW, memory, half + at, SMALL_ROW, SMALL_ROW, 1);
      }
      long called = System.nanoTime();
      // Every other row of each half, then the rows between: rows a pitch apart, as a scatter's.
      long pitch = 2L * SMALL_ROW;
      memory.copyRows(0, pitch, memory, half, pitch, SMALL_ROW, smallRows / 2);
      memory.copyRows(SMALL_ROW, pitch, memory, half + SMALL_ROW, pitch, SMALL_ROW, smallRows / 2);
      long rowed = System.nanoTime();
      memory.copyRows(0, MIB, memory, half, MIB, MIB, largeRows);
      long end = System.nanoTime();
      calls = Math.min(calls, called - start);
      rows = Math.min(rows, rowed - called);
      bytes = Math.min(bytes, end - rowed);
    }
    // rows = 2 c + smallRows r + half b; bytes = c + largeRows r + half b;
    // calls = 4,096 (c + r + 256 b).
    double perRow = Math.max(0, (double) (rows - bytes) / (smallRows - largeRows));
    double perByte = Math.max(0, (bytes - largeRows * perRow) / half);
    double perCopy = Math.max(0, (calls - (double) CALLS * (perRow + SMALL_ROW * perByte)) / CALLS);
    return new CopyCost(perCopy, perRow, perByte);
  }
}
