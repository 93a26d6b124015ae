package io.kvbridge.events;

import java.util.Arrays;

/**
 * Which engines hold each block hash: an open-addressing table of primitive hashes, each with a bit
 * set of engine slots. A router indexes hundreds of thousands of blocks and replaces tens of
 * thousands at each snapshot; held as a few arrays, the index puts no object per block on the heap
 * for the collector to trace and copy, and a lookup reads two arrays. The table grows as it fills
 * and never shrinks: a router's index stays about as large as its fleet's caches.
 *
 * <p>A hash is in the table exactly while some engine holds it: an entry whose bits are all clear
 * is free. Linear probing; a removed entry is filled by shifting the entries after it back, so
 * probes never cross a hole.
 *
 * <p>Threads: not safe; {@link LeftRightHolders} changes only a copy no reader reads.
 */
final class HolderTable {

  private static final int MIN_CAPACITY = 16;

  private long[] keys;
  // words consecutive longs per entry: bit s of the entry's bits is engine slot s.
  private long[] bits;
  private int words;
  private int mask;
  private int size;

  /** A table for engine slots {@code 0..63}; it widens when a higher slot is first set. */
  HolderTable() {
    this.words = 1;
    allocate(MIN_CAPACITY);
  }

  /** How many hashes some engine holds. */
  int size() {
    return size;
  }

  /** Sets {@code slot}'s bit for {@code hash}; whether it was clear. */
  boolean set(long hash, int slot) {
    if (slot >= words * 64) {
      widen(slot / 64 + 1);
    }
    int i = find(hash);
    if (i < 0) {
      if ((size + 1) * 4L > (mask + 1) * 3L) {
        rehash((mask + 1) * 2);
      }
      i = insertionPoint(hash);
      keys[i] = hash;
      size++;
    }
    int word = i * words + slot / 64;
    long bit = 1L << slot;
    boolean wasClear = (bits[word] & bit) == 0;
    bits[word] |= bit;
    return wasClear;
  }

  /** Clears {@code slot}'s bit for {@code hash}; whether it was set. */
  boolean clear(long hash, int slot) {
    int i = find(hash);
    if (i < 0 || slot >= words * 64) {
      return false;
    }
    int word = i * words + slot / 64;
    long bit = 1L << slot;
    if ((bits[word] & bit) == 0) {
      return false;
    }
    bits[word] &= ~bit;
    if (isFree(i)) {
      removeAt(i);
    }
    return true;
  }

  /**
   * The hashes whose bit {@code slot} is set, {@code expected} of them if the caller knows how many
   * (a hint: the array grows if there are more); one pass over the table.
   */
  long[] hashesOf(int slot, int expected) {
    if (slot >= words * 64) {
      return new long[0];
    }
    int offset = slot / 64;
    long bit = 1L << slot;
    long[] found = new long[Math.max(expected, 0)];
    int n = 0;
    for (int i = 0; i <= mask; i++) {
      if ((bits[i * words + offset] & bit) != 0) {
        if (n == found.length) {
          found = Arrays.copyOf(found, Math.max(16, n * 2));
        }
        found[n++] = keys[i];
      }
    }
    return n == found.length ? found : Arrays.copyOf(found, n);
  }

  /**
   * Clears {@code slot}'s bit for every hash ({@code expected} of them, a hint), dropping the
   * hashes no engine holds any more, in place: the table keeps its size.
   */
  void clearSlot(int slot, int expected) {
    for (long hash : hashesOf(slot, expected)) {
      clear(hash, slot);
    }
  }

  /**
   * The bits of {@code hash} into {@code into} ({@link #words} longs), all clear if no engine holds
   * it.
   */
  void bitsOf(long hash, long[] into) {
    int i = find(hash);
    if (i < 0) {
      Arrays.fill(into, 0, words, 0L);
    } else {
      System.arraycopy(bits, i * words, into, 0, words);
    }
  }

  /** Longs per entry's bit set: one per 64 engine slots. */
  int words() {
    return words;
  }

  private int find(long hash) {
    for (int i = home(hash); ; i = (i + 1) & mask) {
      if (isFree(i)) {
        return -1;
      }
      if (keys[i] == hash) {
        return i;
      }
    }
  }

  private int insertionPoint(long hash) {
    int i = home(hash);
    while (!isFree(i)) {
      i = (i + 1) & mask;
    }
    return i;
  }

  private boolean isFree(int i) {
    int from = i * words;
    for (int w = 0; w < words; w++) {
      if (bits[from + w] != 0) {
        return false;
      }
    }
    return true;
  }

  /** Frees entry {@code i} and shifts back the entries of its probe run that may fill it. */
  private void removeAt(int i) {
    size--;
    int hole = i;
    for (int j = (hole + 1) & mask; !isFree(j); j = (j + 1) & mask) {
      int home = home(keys[j]);
      // Entry j may move into the hole only if its home is not cyclically within (hole, j].
      boolean homeBetween = hole <= j ? hole < home && home <= j : hole < home || home <= j;
      if (!homeBetween) {
        keys[hole] = keys[j];
        System.arraycopy(bits, j * words, bits, hole * words, words);
        Arrays.fill(bits, j * words, j * words + words, 0L);
        hole = j;
      }
    }
  }

  private int home(long hash) {
    // Fibonacci hashing: the product's high half spreads every bit of the hash.
    return (int) ((hash * 0x9E3779B97F4A7C15L) >>> 32) & mask;
  }

  private void widen(int newWords) {
    long[] oldKeys = keys;
    long[] oldBits = bits;
    int oldWords = words;
    int oldCapacity = mask + 1;
    words = newWords;
    allocate(oldCapacity);
    reinsert(oldKeys, oldBits, oldWords, oldCapacity);
  }

  private void rehash(int capacity) {
    long[] oldKeys = keys;
    long[] oldBits = bits;
    int oldCapacity = mask + 1;
    allocate(capacity);
    reinsert(oldKeys, oldBits, words, oldCapacity);
  }

  private void allocate(int capacity) {
    keys = new long[capacity];
    bits = new long[capacity * words];
    mask = capacity - 1;
    size = 0;
  }

  private void reinsert(long[] oldKeys, long[] oldBits, int oldWords, int oldCapacity) {
    for (int i = 0; i < oldCapacity; i++) {
      boolean held = false;
      for (int w = 0; w < oldWords; w++) {
        held |= oldBits[i * oldWords + w] != 0;
      }
      if (held) {
        int at = insertionPoint(oldKeys[i]);
        keys[at] = oldKeys[i];
        System.arraycopy(oldBits, i * oldWords, bits, at * words, oldWords);
        size++;
      }
    }
  }
}
