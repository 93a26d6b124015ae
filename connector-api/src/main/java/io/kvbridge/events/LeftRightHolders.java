package io.kvbridge.events;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.ToIntFunction;

/**
 * Two copies of the holder table, so that a router's matches never wait for an update (the
 * left-right technique of Ramalhete and Correia): readers read the copy the writer is not changing;
 * a writer changes the other copy, turns readers to it, waits until no reader is left on the first,
 * and makes the same change there.
 *
 * <p>A match is then as fast while a snapshot of tens of thousands of blocks is applied, or while
 * the thread applying it is descheduled, as on an idle index. The price: twice the memory, and each
 * change made twice.
 *
 * <p>Threads: {@link #read} from any thread, wait-free but for two atomic counts; {@link #write}
 * from one thread at a time (the caller serializes writers).
 */
final class LeftRightHolders {

  /** One copy: the table and the engine named by each slot, changed together. */
  static final class Side {
    final HolderTable table = new HolderTable();
    String[] names = new String[0];

    /** Names {@code slot} {@code engineId} ({@code null}: free). */
    void name(int slot, String engineId) {
      if (slot >= names.length) {
        names = Arrays.copyOf(names, Math.max(slot + 1, names.length * 2));
      }
      names[slot] = engineId;
    }
  }

  private final Side[] sides = {new Side(), new Side()};
  private final AtomicInteger[] readers = {new AtomicInteger(), new AtomicInteger()};
  private volatile int readable;
  private volatile int version;

  /** {@code reading} applied to the copy readers may read now. */
  <R> R read(Function<Side, R> reading) {
    AtomicInteger arrived = readers[version];
    arrived.incrementAndGet();
    try {
      return reading.apply(sides[readable]);
    } finally {
      arrived.decrementAndGet();
    }
  }

  /**
   * Applies {@code change} to both copies, one after the other, readers never seeing a copy being
   * changed; returns what it returned on the first. {@code change} must do the same to either copy.
   */
  int write(ToIntFunction<Side> change) {
    int left = readable;
    int result = change.applyAsInt(sides[1 - left]);
    readable = 1 - left;
    turnReaders();
    change.applyAsInt(sides[left]);
    return result;
  }

  /** Waits until every reader that may still read the copy readers left is gone. */
  private void turnReaders() {
    int previous = version;
    int next = 1 - previous;
    awaitNone(readers[next]);
    version = next;
    awaitNone(readers[previous]);
  }

  private static void awaitNone(AtomicInteger readersOf) {
    while (readersOf.get() != 0) {
      Thread.yield();
    }
  }
}
