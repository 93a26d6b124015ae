package io.kvbridge.events;

import java.util.Arrays;
import java.util.Objects;

/**
 * {@link BlockHashes} with the hashes of recently seen blocks remembered, for a router that hashes
 * every prompt it routes: a conversation's next turn repeats the blocks of the turn before, and a
 * shared system prompt the blocks of every conversation. A remembered block costs a comparison of
 * its tokens instead of a SHA-256.
 *
 * <p>A block is remembered by its parent's hash and its tokens, compared in full, so a remembered
 * hash is exactly the hash {@link BlockHashes} computes. The memory is a fixed number of entries,
 * each block hashed into one of them (a newer block replaces an older one of the same place).
 *
 * <p>Thread-safe: entries are immutable and replaced whole; two threads hashing the same block at
 * once both compute it.
 */
public final class BlockHashMemo {

  private final BlockHashes hashes;
  private final Entry[] entries;
  private final int mask;

  /** A block remembered: its parent's hash, its tokens and its hash. */
  private record Entry(long parent, int[] tokens, long hash) {}

  /**
   * Remembers up to {@code capacity} blocks (rounded up to a power of two) of {@code hashes}' model
   * and block size.
   */
  public BlockHashMemo(BlockHashes hashes, int capacity) {
    this.hashes = Objects.requireNonNull(hashes, "hashes");
    if (capacity < 1) {
      throw new IllegalArgumentException(
          "a memo of block hashes holds at least 1, got " + capacity);
    }
    int size = Integer.highestOneBit(Math.max(1, capacity - 1)) << 1;
    this.entries = new Entry[Math.min(size, 1 << 30)];
    this.mask = entries.length - 1;
  }

  /** The hashes {@link BlockHashes#of(int[])} gives for {@code tokens}. */
  public long[] of(int[] tokens) {
    int perBlock = hashes.tokensPerBlock();
    long[] out = new long[tokens.length / perBlock];
    long parent = hashes.root();
    BlockHashes.Hasher hasher = null;
    for (int b = 0; b < out.length; b++) {
      int from = b * perBlock;
      int to = from + perBlock;
      int place = place(parent, tokens, from, to);
      Entry entry = entries[place];
      if (entry == null
          || entry.parent() != parent
          || !Arrays.equals(entry.tokens(), 0, perBlock, tokens, from, to)) {
        if (hasher == null) {
          hasher = hashes.new Hasher();
        }
        entry =
            new Entry(
                parent, Arrays.copyOfRange(tokens, from, to), hasher.next(parent, tokens, from));
        entries[place] = entry;
      }
      parent = entry.hash();
      out[b] = parent;
    }
    return out;
  }

  private int place(long parent, int[] tokens, int from, int to) {
    long h = parent;
    for (int t = from; t < to; t++) {
      h = (h ^ tokens[t]) * 0x9E3779B97F4A7C15L;
    }
    return (int) (h >>> 32) & mask;
  }
}
