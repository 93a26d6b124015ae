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

  /** The bytes {@link #measure} needs: a source and a target of 1 MiB each. */
  public static final long MEASURE_BYTES = 2L << 20;

  private static final int HALF = 1 << 20;
  private static final int SMALL_ROW = 256;
  private static final int SMALL_ROWS = HALF / SMALL_ROW;
  private static final int LARGE_ROW = 64 << 10;
  private static final int LARGE_ROWS = HALF / LARGE_ROW;
  private static final int ROUNDS = 7;

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
   * Measures copies within the first {@value #MEASURE_BYTES} bytes of {@code memory} (which it
   * overwrites): the best of a few rounds each of 4,096 calls of one 256-byte row, one call of
   * 4,096 such rows, and one call of 16 rows of 64 KiB, solved for the three costs (each at least
   * 0).
   *
   * @throws IllegalArgumentException if the memory is smaller than {@value #MEASURE_BYTES}
   */
  public static CopyCost measure(KvMemory memory) {
    if (memory.sizeBytes() < MEASURE_BYTES) {
      throw new IllegalArgumentException(
          "measuring copies needs " + MEASURE_BYTES + " bytes, got " + memory.sizeBytes());
    }
    long manyCalls = Long.MAX_VALUE;
    long manyRows = Long.MAX_VALUE;
    long largeRows = Long.MAX_VALUE;
    for (int round = 0; round < ROUNDS; round++) {
      long start = System.nanoTime();
      for (int i = 0; i < SMALL_ROWS; i++) {
        memory.copyRows(
            (long) i * SMALL_ROW,
            SMALL_ROW,
            memory,
            HALF + (long) i * SMALL_ROW,
            SMALL_ROW,
            SMALL_ROW,
            1);
      }
      long mid = System.nanoTime();
      // Rows a pitch apart on both sides, as a scatter copies them: every other row of each half.
      memory.copyRows(0, 2L * SMALL_ROW, memory, HALF, 2L * SMALL_ROW, SMALL_ROW, SMALL_ROWS / 2);
      memory.copyRows(
          SMALL_ROW,
          2L * SMALL_ROW,
          memory,
          HALF + SMALL_ROW,
          2L * SMALL_ROW,
          SMALL_ROW,
          SMALL_ROWS / 2);
      long end = System.nanoTime();
      memory.copyRows(0, LARGE_ROW, memory, HALF, LARGE_ROW, LARGE_ROW, LARGE_ROWS);
      long last = System.nanoTime();
      manyCalls = Math.min(manyCalls, mid - start);
      manyRows = Math.min(manyRows, end - mid);
      largeRows = Math.min(largeRows, last - end);
    }
    // manyCalls = 4096 c + 4096 r + B b;  manyRows = 2 c + 4096 r + B b;  largeRows = c + 16 r + B
    // b
    double perCopy = Math.max(0, (double) (manyCalls - manyRows) / (SMALL_ROWS - 2));
    double perRow =
        Math.max(0, (manyRows - largeRows - perCopy) / (double) (SMALL_ROWS - LARGE_ROWS));
    double perByte = Math.max(0, (largeRows - perCopy - LARGE_ROWS * perRow) / HALF);
    return new CopyCost(perCopy, perRow, perByte);
  }
}
