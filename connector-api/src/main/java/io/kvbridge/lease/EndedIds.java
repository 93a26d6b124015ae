package io.kvbridge.lease;

import java.util.Arrays;

/**
 * The request ids of the leases among the last {@code capacity} ends, with how each ended, less
 * those forgotten since (an id leased again): a ring of ids in end order, where an end takes the
 * place of the one {@code capacity} ends before it, indexed by an open-addressing hash table
 * (linear probing, kept at most half full, deletion by backward shift), so that remembering,
 * looking up and forgetting an id are O(1) on average and allocate nothing.
 *
 * <p>Not thread-safe: the lease table calls it under its lock.
 */
final class EndedIds {

  private static final int EMPTY = -1;

  private final String[] ids;
  private final EndReason[] reasons;
  private final int[] index; // slot of the hash table -> position in the ring, or EMPTY
  private final int mask;
  private final int shift;
  private int next; // the ring position the next id takes
  private int size;

  /** Remembers the ids of the last {@code capacity} ends. */
  EndedIds(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be at least 1, got " + capacity);
    }
    ids = new String[capacity];
    reasons = new EndReason[capacity];
    int slots = Integer.highestOneBit(capacity * 2 - 1) * 2;
    index = new int[slots];
    Arrays.fill(index, EMPTY);
    mask = slots - 1;
    shift = 32 - Integer.numberOfTrailingZeros(slots);
  }

  int size() {
    return size;
  }

  /**
   * Remembers that {@code id} ended for {@code reason}, in the place of the end {@code capacity}
   * ends ago (whose id is forgotten, if still remembered).
   */
  void put(String id, EndReason reason) {
    remove(id);
    if (ids[next] != null) {
      remove(ids[next]);
    }
    ids[next] = id;
    reasons[next] = reason;
    int slot = hash(id);
    while (index[slot] != EMPTY) {
      slot = (slot + 1) & mask;
    }
    index[slot] = next;
    size++;
    next = next + 1 == ids.length ? 0 : next + 1;
  }

  boolean contains(String id) {
    return find(id) != EMPTY;
  }

  /** How {@code id} ended, or null if it is not remembered. */
  EndReason reason(String id) {
    int slot = find(id);
    return slot == EMPTY ? null : reasons[index[slot]];
  }

  /** Forgets {@code id}, if remembered. */
  void remove(String id) {
    int slot = find(id);
    if (slot == EMPTY) {
      return;
    }
    int position = index[slot];
    ids[position] = null;
    reasons[position] = null;
    size--;
    // Backward-shift deletion: move later members of the probe run into the gap, so that no
    // lookup stops early at it.
    int gap = slot;
    for (int probe = (gap + 1) & mask; index[probe] != EMPTY; probe = (probe + 1) & mask) {
      int home = hash(ids[index[probe]]);
      if (((probe - home) & mask) >= ((probe - gap) & mask)) {
        index[gap] = index[probe];
        gap = probe;
      }
    }
    index[gap] = EMPTY;
  }

  /** The hash-table slot that holds {@code id}, or EMPTY. */
  private int find(String id) {
    for (int slot = hash(id); index[slot] != EMPTY; slot = (slot + 1) & mask) {
      if (id.equals(ids[index[slot]])) {
        return slot;
      }
    }
    return EMPTY;
  }

  private int hash(String id) {
    // Fibonacci hashing: the top bits of the product spread ids that differ in few bits (req-1,
    // req-2, ...). String caches its hash code, so this costs no pass over the id after the first.
    return (id.hashCode() * 0x9E3779B1) >>> shift;
  }
}
