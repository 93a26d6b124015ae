package io.kvbridge.sample.engine;

import io.kvbridge.events.BlockHashes;
import io.kvbridge.events.KvEventLog;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The KV of prompts an engine has served, kept in blocks of its {@link BlockPool} so that a later
 * prompt starting with the same tokens need not load or compute them again. Bounded by a number of
 * blocks; the least recently used block goes first.
 *
 * <p>Each cached block is keyed by its tokens and by the cached block before it, so a block matches
 * only after exactly the same prefix (the KV of a token depends on every token before it). A
 * prompt's partly filled last block is kept too, as a block that matches only a prompt ending with
 * exactly its tokens: that is what lets a repeated prompt be found whole.
 *
 * <p>A lookup {@linkplain Hit pins} the blocks it found until the engine has copied them into the
 * request's own blocks and {@linkplain #release released} the hit; pinned blocks are never evicted.
 * A request's blocks never become cache blocks while the request uses them: {@link #keep} takes
 * them when the engine is done with the request.
 *
 * <p>Eviction: every lookup and every {@link #keep} touches a prompt's blocks from its last to its
 * first, so a block is always used less recently than the block before it; the least recently used
 * unpinned block therefore has no cached successor, and evicting it never strands another block. A
 * lookup costs O(blocks of the prompt); an eviction O(1) plus the pinned blocks it passes over.
 *
 * <p>KV events: a cache made with a {@link KvEventLog} records each full block it takes as stored
 * and each one it evicts as removed, named by its {@link BlockHashes} (a partly filled last block
 * is never published); the engine closes them into a batch at the end of each step.
 *
 * <p>Threads: engine thread only, but for {@link #blocks()}, which may be read from any thread.
 */
final class PrefixCache {

  /** A lookup that found nothing. */
  static final Hit MISS = new Hit(0, List.of(), List.of());

  private final BlockPool pool;
  private final int capacity;
  private final Optional<Publishing> publishing;
  private final int tokensPerBlock;
  // In access order: the first entry is the least recently used.
  private final LinkedHashMap<Key, Entry> entries = new LinkedHashMap<>(16, 0.75f, true);
  private long nextSerial = 1;
  private int pinnedBlocks;
  private volatile int blockCount;

  /**
   * A cache of at most {@code capacity} blocks of {@code pool} (0: nothing is kept); the blocks it
   * keeps count as held in the pool.
   */
  PrefixCache(BlockPool pool, int capacity) {
    this(pool, capacity, Optional.empty());
  }

  /**
   * A cache as {@link #PrefixCache(BlockPool, int)} that records what it keeps and evicts in {@code
   * events}, its blocks named by {@code hashes}.
   */
  PrefixCache(BlockPool pool, int capacity, BlockHashes hashes, KvEventLog events) {
    this(pool, capacity, Optional.of(new Publishing(hashes, events)));
  }

  private PrefixCache(BlockPool pool, int capacity, Optional<Publishing> publishing) {
    if (publishing.isPresent()
        && publishing.get().hashes().tokensPerBlock() != pool.tokensPerBlock()) {
      throw new IllegalArgumentException(
          "block hashes of "
              + publishing.get().hashes().tokensPerBlock()
              + " tokens for a pool of blocks of "
              + pool.tokensPerBlock());
    }
    this.publishing = publishing;
    if (capacity < 0 || capacity > pool.blockCount()) {
      throw new IllegalArgumentException(
          "a prefix cache keeps 0 to " + pool.blockCount() + " blocks, got " + capacity);
    }
    this.pool = pool;
    this.capacity = capacity;
    this.tokensPerBlock = pool.tokensPerBlock();
  }

  /** The blocks the cache holds now; callable from any thread. */
  int blocks() {
    return blockCount;
  }

  /** The blocks {@link #evict} could free now: those no lookup has pinned. */
  int evictable() {
    return entries.size() - pinnedBlocks;
  }

  /**
   * The longest run of cached blocks {@code prompt} starts with, pinned until {@link #release}:
   * whole blocks, and the prompt's partly filled last block when it ends exactly there.
   */
  Hit lookup(int[] prompt) {
    if (capacity == 0) {
      return MISS;
    }
    List<Entry> chain = new ArrayList<>();
    long parent = 0;
    for (int start = 0; start < prompt.length; start += tokensPerBlock) {
      Entry e = entries.get(key(parent, prompt, start));
      if (e == null) {
        break;
      }
      chain.add(e);
      parent = e.serial;
    }
    if (chain.isEmpty()) {
      return MISS;
    }
    touch(chain);
    List<Integer> ids = new ArrayList<>(chain.size());
    for (Entry e : chain) {
      if (e.pins++ == 0) {
        pinnedBlocks++;
      }
      ids.add(e.blockId);
    }
    int tokens = Math.min(prompt.length, chain.size() * tokensPerBlock);
    return new Hit(tokens, List.copyOf(ids), List.copyOf(chain));
  }

  /** Unpins a hit's blocks; then the cache shrinks back to its capacity if it was over. */
  void release(Hit hit) {
    for (Entry e : hit.entries) {
      if (--e.pins == 0) {
        pinnedBlocks--;
      }
    }
    trim();
  }

  /**
   * Takes the blocks of a request the engine is done with: {@code blockIds} hold the KV of {@code
   * prompt}, in token order. A block whose tokens (after the same prefix) are cached already is
   * freed, the others become the cache's; then the least recently used blocks are evicted down to
   * the capacity. Every block of {@code blockIds} is either kept or freed.
   */
  void keep(int[] prompt, List<Integer> blockIds) {
    if (blockIds.size() != pool.blocksFor(prompt.length)) {
      throw new IllegalArgumentException(
          prompt.length + " tokens are held in " + blockIds.size() + " blocks");
    }
    if (capacity == 0) {
      pool.free(blockIds);
      return;
    }
    List<Entry> chain = new ArrayList<>(blockIds.size());
    List<Integer> duplicates = new ArrayList<>();
    long[] hashes = publishing.map(p -> p.hashes().of(prompt)).orElse(new long[0]);
    List<Long> stored = new ArrayList<>();
    long parent = 0;
    for (int b = 0; b < blockIds.size(); b++) {
      Key key = key(parent, prompt, b * tokensPerBlock);
      Entry e = entries.get(key);
      if (e == null) {
        // Only full blocks have a hash: a partly filled last block is never published.
        OptionalLong hash = b < hashes.length ? OptionalLong.of(hashes[b]) : OptionalLong.empty();
        e = new Entry(key, nextSerial++, blockIds.get(b), hash);
        entries.put(key, e);
        hash.ifPresent(stored::add);
      } else {
        duplicates.add(blockIds.get(b));
      }
      chain.add(e);
      parent = e.serial;
    }
    if (!duplicates.isEmpty()) {
      pool.free(duplicates);
    }
    publishing.ifPresent(p -> p.events().stored(stored));
    touch(chain);
    trim();
  }

  /** Closes what was kept and evicted since the last call into a batch of KV events, if any. */
  void flushEvents() {
    publishing.ifPresent(p -> p.events().flush());
  }

  /**
   * Frees up to {@code count} of the least recently used unpinned blocks, for a request that needs
   * them; returns how many it freed.
   */
  int evict(int count) {
    List<Integer> freed = new ArrayList<>();
    List<Long> removed = new ArrayList<>();
    Iterator<Entry> it = entries.values().iterator();
    while (freed.size() < count && it.hasNext()) {
      Entry e = it.next();
      if (e.pins == 0) {
        it.remove();
        freed.add(e.blockId);
        e.hash.ifPresent(removed::add);
      }
    }
    if (!freed.isEmpty()) {
      pool.free(freed);
      publishing.ifPresent(p -> p.events().removed(removed));
    }
    blockCount = entries.size();
    return freed.size();
  }

  private void trim() {
    evict(entries.size() - capacity);
  }

  /** Touches {@code chain} from its last block to its first, so the first is the most recent. */
  private void touch(List<Entry> chain) {
    for (int i = chain.size() - 1; i >= 0; i--) {
      entries.get(chain.get(i).key);
    }
  }

  private Key key(long parent, int[] prompt, int start) {
    return new Key(
        parent, Arrays.copyOfRange(prompt, start, Math.min(prompt.length, start + tokensPerBlock)));
  }

  /**
   * Cached blocks a prompt starts with.
   *
   * @param tokens how many of the prompt's first tokens they hold: a multiple of the block size, or
   *     the whole prompt
   * @param blockIds the blocks, in token order; read them only until the hit is released
   */
  record Hit(int tokens, List<Integer> blockIds, List<Entry> entries) {

    /** Whether nothing was found. */
    boolean isMiss() {
      return blockIds.isEmpty();
    }
  }

  /** A block's tokens after the cached block with serial {@code parent} (0: the prompt's start). */
  private record Key(long parent, int[] tokens) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Key k && k.parent == parent && Arrays.equals(k.tokens, tokens);
    }

    @Override
    public int hashCode() {
      return Long.hashCode(parent) * 31 + Arrays.hashCode(tokens);
    }

    @Override
    public String toString() {
      return "Key[parent=" + parent + ", " + tokens.length + " tokens]";
    }
  }

  /** How a cache names its blocks and where it records what it keeps and evicts. */
  private record Publishing(BlockHashes hashes, KvEventLog events) {}

  /** A cached block. */
  static final class Entry {
    private final Key key;
    private final long serial;
    private final int blockId;
    // The block's BlockHashes hash when it is full and the cache publishes events.
    private final OptionalLong hash;
    private int pins;

    private Entry(Key key, long serial, int blockId, OptionalLong hash) {
      this.key = key;
      this.serial = serial;
      this.blockId = blockId;
      this.hash = hash;
    }
  }
}
