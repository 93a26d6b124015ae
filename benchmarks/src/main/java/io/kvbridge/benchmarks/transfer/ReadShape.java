package io.kvbridge.benchmarks.transfer;

import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The shape of one READ request: {@code blocks} blocks of {@code blockBytes} each, laid out back to
 * back in a region of {@link #totalBytes()}. Written as {@code <size><unit>x<blocks>}, e.g. {@code
 * 256KiBx16}, which is how the benchmarks take it as a parameter.
 *
 * @param blockBytes the size of one block, a positive number of bytes
 * @param blocks the number of blocks per request, positive
 */
public record ReadShape(long blockBytes, int blocks) {

  /** The most bytes one request may move, so that both sides fit comfortably in one heap. */
  public static final long MAX_TOTAL_BYTES = 256L << 20;

  private static final Pattern FORM = Pattern.compile("(\\d+)(B|KiB|MiB)x(\\d+)");

  /** Rejects empty shapes and shapes over {@link #MAX_TOTAL_BYTES}. */
  public ReadShape {
    if (blockBytes <= 0 || blocks <= 0) {
      throw new IllegalArgumentException(
          "block size and block count must be positive, got " + blockBytes + " x " + blocks);
    }
    if (blockBytes * blocks > MAX_TOTAL_BYTES) {
      throw new IllegalArgumentException(
          "a request of "
              + blocks
              + " blocks of "
              + blockBytes
              + " bytes exceeds the cap of "
              + MAX_TOTAL_BYTES
              + " bytes per request; use fewer or smaller blocks");
    }
  }

  /** Parses {@code <size><unit>x<blocks>}, unit one of B, KiB, MiB. */
  public static ReadShape parse(String text) {
    Matcher m = FORM.matcher(text);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "a read shape looks like 16KiBx256 (block size with unit B, KiB or MiB, 'x', block"
              + " count), got '"
              + text
              + "'");
    }
    long unit =
        switch (m.group(2)) {
          case "KiB" -> 1L << 10;
          case "MiB" -> 1L << 20;
          default -> 1L;
        };
    return new ReadShape(Long.parseLong(m.group(1)) * unit, Integer.parseInt(m.group(3)));
  }

  /** The bytes one request moves. */
  public long totalBytes() {
    return blockBytes * blocks;
  }

  /** The byte offset of block {@code i} in its region. */
  public long offsetOf(int i) {
    return i * blockBytes;
  }

  /** One descriptor per block of {@code memory}, in block order. */
  public DescriptorList descriptors(KvMemory memory) {
    List<Descriptor> pieces = new ArrayList<>(blocks);
    for (int i = 0; i < blocks; i++) {
      pieces.add(new Descriptor(memory.address() + offsetOf(i), blockBytes, memory.deviceId()));
    }
    return new DescriptorList(memory.kind(), pieces);
  }
}
