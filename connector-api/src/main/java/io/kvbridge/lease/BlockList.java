package io.kvbridge.lease;

import java.util.AbstractList;
import java.util.List;
import java.util.RandomAccess;

/**
 * An unmodifiable list of block ids over an {@code int[]}: what a {@link Lease} holds. Copying a
 * list into it once, at grant, lets every later snapshot of the lease share it without copying
 * again, and without calling into shared library code whose branches the JIT cannot prune (which
 * would keep it from eliding a snapshot nobody looks at).
 *
 * <p>Threads: immutable.
 */
final class BlockList extends AbstractList<Integer> implements RandomAccess {

  private final int[] ids;

  private BlockList(int[] ids) {
    this.ids = ids;
  }

  /**
   * {@code ids} itself if it is a block list already, else {@link #copyOf} it. A lease table's
   * snapshots always pass a block list, so at their call sites the copy is a branch never taken.
   */
  static List<Integer> of(List<Integer> ids) {
    return ids instanceof BlockList ? ids : copyOf(ids);
  }

  /** An unmodifiable copy of {@code ids}. */
  static BlockList copyOf(List<Integer> ids) {
    int[] copy = new int[ids.size()];
    for (int i = 0; i < copy.length; i++) {
      copy[i] = ids.get(i); // unboxing refuses nulls, as List.copyOf does
    }
    return new BlockList(copy);
  }

  @Override
  public Integer get(int index) {
    return ids[index];
  }

  @Override
  public int size() {
    return ids.length;
  }
}
