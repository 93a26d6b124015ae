package io.kvbridge.transfer;

import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * The memory registered with one agent, found by descriptor: the lookup an {@link AgentCore} makes
 * to check a local piece, and a backend makes where its mechanism resolves a piece to its memory.
 *
 * <p>Lookups read a sorted snapshot in O(log n) and allocate nothing; a change copies it (O(n)),
 * which suits memory registered once and looked up per transfer.
 *
 * <p>Threads: lookups may run on any thread, concurrently with a change; changes are made one at a
 * time.
 */
public final class Registrations {

  private static final KvMemory[] NONE = new KvMemory[0];
  private static final Comparator<KvMemory> BY_ADDRESS =
      Comparator.comparingLong(KvMemory::address);

  private volatile KvMemory[] byAddress = NONE;

  /** No memory registered. */
  public Registrations() {}

  /** Adds {@code memory}; returns false, adding nothing, if it is already in. */
  public boolean add(KvMemory memory) {
    if (contains(memory)) {
      return false;
    }
    KvMemory[] now = byAddress;
    KvMemory[] next = Arrays.copyOf(now, now.length + 1);
    next[now.length] = memory;
    Arrays.sort(next, BY_ADDRESS);
    byAddress = next;
    return true;
  }

  /** Removes {@code memory}; returns false if it was not in. */
  public boolean remove(KvMemory memory) {
    KvMemory[] now = byAddress;
    for (int i = 0; i < now.length; i++) {
      if (now[i] == memory) {
        KvMemory[] next = new KvMemory[now.length - 1];
        System.arraycopy(now, 0, next, 0, i);
        System.arraycopy(now, i + 1, next, i, now.length - i - 1);
        byAddress = next;
        return true;
      }
    }
    return false;
  }

  /** Whether {@code memory} itself is in. */
  public boolean contains(KvMemory memory) {
    for (KvMemory m : byAddress) {
      if (m == memory) {
        return true;
      }
    }
    return false;
  }

  /** The memory of {@code kind} that holds all of {@code d}, or null. */
  public KvMemory holding(Descriptor d, MemoryKind kind) {
    KvMemory[] sorted = byAddress;
    int low = 0;
    int high = sorted.length - 1;
    while (low <= high) {
      int mid = (low + high) >>> 1;
      if (sorted[mid].address() <= d.address()) {
        low = mid + 1;
      } else {
        high = mid - 1;
      }
    }
    // sorted[high] is the last region starting at or before d; regions of other kinds or devices
    // may share addresses, so look further back until one holds it.
    for (int i = high; i >= 0; i--) {
      KvMemory m = sorted[i];
      if (m.kind() == kind
          && m.deviceId() == d.deviceId()
          && d.within(m.address(), m.sizeBytes())) {
        return m;
      }
    }
    return null;
  }

  /**
   * The index of the first piece of {@code list} that no registered memory holds, if any.
   *
   * @see #holding
   */
  public Optional<Integer> firstOutside(DescriptorList list) {
    List<Descriptor> pieces = list.descriptors();
    for (int i = 0; i < pieces.size(); i++) {
      if (holding(pieces.get(i), list.kind()) == null) {
        return Optional.of(i);
      }
    }
    return Optional.empty();
  }

  /** The registered memory, by address. */
  public List<KvMemory> all() {
    return List.of(byAddress);
  }

  /** Removes everything. */
  public void clear() {
    byAddress = NONE;
  }
}
