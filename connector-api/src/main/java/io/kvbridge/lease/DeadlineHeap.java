package io.kvbridge.lease;

import java.util.Arrays;

/**
 * Live leases ordered by (deadline, grant sequence): a binary min-heap whose entries know their
 * slot, so that a lease is added, moved later or removed in O(log n) without searching for it, and
 * the soonest is found in O(1). Nothing is allocated per operation (the arrays grow by doubling).
 * Deadlines are kept in an array beside the leases, so that a sift compares them without reading
 * the lease records; a record is read only on a tie, and written when it moves.
 *
 * <p>Not thread-safe: the lease table calls it under its lock.
 */
final class DeadlineHeap {

  /** What the heap orders: the lease table's live lease records. */
  abstract static class Entry {
    /** Ties of deadline are broken by it; unique per entry. */
    final long sequence;

    /** The entry's slot in the heap, or -1 when it is in none. */
    int slot = -1;

    Entry(long sequence) {
      this.sequence = sequence;
    }
  }

  private Entry[] entries = new Entry[16];
  private long[] deadlines = new long[16];
  private int size;

  int size() {
    return size;
  }

  boolean isEmpty() {
    return size == 0;
  }

  /** The entry with the soonest deadline; the heap must not be empty. */
  Entry first() {
    return entries[0];
  }

  /** The soonest deadline; the heap must not be empty. */
  long firstDeadline() {
    return deadlines[0];
  }

  void add(Entry entry, long deadline) {
    if (size == entries.length) {
      entries = Arrays.copyOf(entries, size * 2);
      deadlines = Arrays.copyOf(deadlines, size * 2);
    }
    siftUp(size++, entry, deadline);
  }

  /** Moves {@code entry} to its later {@code deadline}. */
  void postpone(Entry entry, long deadline) {
    siftDown(entry.slot, entry, deadline);
  }

  void remove(Entry entry) {
    int slot = entry.slot;
    int last = --size;
    Entry moved = entries[last];
    long movedDeadline = deadlines[last];
    entries[last] = null;
    entry.slot = -1;
    if (slot != last) {
      siftDown(slot, moved, movedDeadline);
      if (moved.slot == slot) {
        siftUp(slot, moved, movedDeadline);
      }
    }
  }

  /** Places {@code entry} at {@code slot} or above, moving the entries it precedes down. */
  private void siftUp(int slot, Entry entry, long deadline) {
    while (slot > 0) {
      int parent = (slot - 1) >>> 1;
      if (!precedes(deadline, entry, parent)) {
        break;
      }
      place(slot, entries[parent], deadlines[parent]);
      slot = parent;
    }
    place(slot, entry, deadline);
  }

  /** Places {@code entry} at {@code slot} or below, moving the entries that precede it up. */
  private void siftDown(int slot, Entry entry, long deadline) {
    int half = size >>> 1;
    while (slot < half) {
      int child = 2 * slot + 1;
      int right = child + 1;
      if (right < size && precedes(deadlines[right], entries[right], child)) {
        child = right;
      }
      if (!precedes(deadlines[child], entries[child], deadline, entry)) {
        break;
      }
      place(slot, entries[child], deadlines[child]);
      slot = child;
    }
    place(slot, entry, deadline);
  }

  /** Whether ({@code deadline}, {@code entry}) comes before the entry at {@code slot}. */
  private boolean precedes(long deadline, Entry entry, int slot) {
    return precedes(deadline, entry, deadlines[slot], entries[slot]);
  }

  private static boolean precedes(long deadline, Entry entry, long otherDeadline, Entry other) {
    return deadline < otherDeadline
        || (deadline == otherDeadline && entry.sequence < other.sequence);
  }

  private void place(int slot, Entry entry, long deadline) {
    entries[slot] = entry;
    deadlines[slot] = deadline;
    entry.slot = slot;
  }
}
