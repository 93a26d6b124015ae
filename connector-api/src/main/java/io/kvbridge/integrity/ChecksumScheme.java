package io.kvbridge.integrity;

import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * How P fingerprints the content of each leased block when it grants the lease, and how D checks
 * what it read before it asks P to validate the read. A mismatch is a load failure, so a block that
 * was overwritten, freed and reused, or damaged in transit is never decoded.
 *
 * <ul>
 *   <li>{@link #CRC32C}: CRC-32C (Castagnoli) over every byte of the block. For host memory: the
 *       JDK computes it with the CPU's CRC instruction at several GB/s.
 *   <li>{@link #CRC32C_SAMPLED}: CRC-32C over {@value #SAMPLES} windows of {@value #WINDOW} bytes
 *       spread evenly over the block (the whole block when it is no larger than the windows). For
 *       device memory, where reading a whole block back to the host costs a PCIe round trip per
 *       block: the sample still tells one request's KV from any other's and from stale memory, but
 *       does not see a corruption confined to the bytes between windows.
 * </ul>
 *
 * P picks the scheme from its memory kind ({@link #forMemory}); the name travels in the transfer
 * parameters, so D always checks with the scheme P used.
 */
public enum ChecksumScheme {
  /** CRC-32C over the whole block. */
  CRC32C("crc32c"),
  /** CRC-32C over evenly spread windows of the block. */
  CRC32C_SAMPLED("crc32c-sampled");

  /** How many windows the sampled scheme reads. */
  public static final int SAMPLES = 8;

  /** The size of one window of the sampled scheme, in bytes. */
  public static final int WINDOW = 512;

  private final String wireName;

  ChecksumScheme(String wireName) {
    this.wireName = wireName;
  }

  /** The name in transfer parameters. */
  public String wireName() {
    return wireName;
  }

  /** The scheme named {@code wireName}, if it is one. */
  public static Optional<ChecksumScheme> fromWireName(String wireName) {
    for (ChecksumScheme scheme : values()) {
      if (scheme.wireName.equals(wireName)) {
        return Optional.of(scheme);
      }
    }
    return Optional.empty();
  }

  /** The scheme a producer uses for memory of {@code kind}. */
  public static ChecksumScheme forMemory(MemoryKind kind) {
    return kind == MemoryKind.VRAM ? CRC32C_SAMPLED : CRC32C;
  }

  /** The checksum of the {@code blockBytes} bytes at {@code offset} of {@code memory}. */
  public int checksum(KvMemory memory, long offset, int blockBytes) {
    return checksum(ChecksumInput.of(memory, offset, blockBytes));
  }

  /**
   * The checksum of {@code input}: CRC-32C over all of it, or over {@value #SAMPLES} windows of
   * {@value #WINDOW} bytes at {@code i × ((length − WINDOW) / (SAMPLES − 1))} when the scheme
   * samples and the input is longer than the windows.
   */
  public int checksum(ChecksumInput input) {
    CRC32C crc = new CRC32C();
    long length = input.length();
    if (this == CRC32C || length <= (long) SAMPLES * WINDOW) {
      input.update(crc, 0, length);
    } else {
      long stride = (length - WINDOW) / (SAMPLES - 1);
      for (int i = 0; i < SAMPLES; i++) {
        input.update(crc, i * stride, WINDOW);
      }
    }
    return (int) crc.getValue();
  }
}
