package io.kvbridge.events;

import java.util.Arrays;
import java.util.BitSet;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Which engines hold which blocks, kept from their KV events, for a router that sends each request
 * where its prefix already is.
 *
 * <p>An engine is indexed once it is {@linkplain #register registered} (its registration is the
 * router's pool or its discovery) and {@linkplain #resync synced} from a snapshot of its model and
 * block size; from there its batches apply in order. What cannot be trusted is refused and counted,
 * never applied ({@link Outcome}):
 *
 * <ul>
 *   <li>a batch or snapshot of an engine not registered;
 *   <li>a batch of another incarnation than the engine's last snapshot (a restarted engine is
 *       indexed again from a snapshot of its new incarnation, which replaces its old entries);
 *   <li>a snapshot of another model or block size;
 *   <li>a batch that skips a number: the engine's entries stay, but it needs a snapshot before any
 *       further batch applies ({@link #needsSnapshot}).
 * </ul>
 *
 * <p>A batch numbered at or below the last one applied is a repeat and changes nothing. Removing an
 * engine ({@link #remove}) drops every entry of it at once.
 *
 * <p>Memory: the blocks are held as primitive hashes with a bit per engine ({@link HolderTable}),
 * in two copies ({@link LeftRightHolders}): about 64 bytes per distinct block at up to 64 engines,
 * and no object per block.
 *
 * <p>Threads: every method may be called from any thread; each is atomic. Updates are applied one
 * at a time; {@link #match} never waits for one ({@link LeftRightHolders}).
 */
public final class PrefixIndex {

  /** What became of a batch or snapshot offered to the index. */
  public enum Outcome {
    /** Applied: the index now holds what the engine holds. */
    APPLIED,
    /** A batch numbered at or below the last applied: nothing changed. */
    REPEATED,
    /** A batch that skipped a number: refused; the engine needs a snapshot. */
    GAP,
    /** Refused: the engine is not registered. */
    UNKNOWN_ENGINE,
    /** Refused: a batch of another incarnation than the engine's snapshot. */
    WRONG_INCARNATION,
    /** Refused: the engine was not synced from a snapshot yet (or lost a batch since). */
    NOT_SYNCED,
    /** Refused: a snapshot of another model or block size than the index's. */
    WRONG_MODEL
  }

  private final String model;
  private final int tokensPerBlock;
  private final Map<String, Engine> engines = new HashMap<>();
  // Which engines hold each block, as bits of the engines' slots; matches read it without a lock.
  private final LeftRightHolders holders = new LeftRightHolders();
  private final BitSet slotsInUse = new BitSet();
  private final EnumMap<Outcome, Long> outcomes = new EnumMap<>(Outcome.class);
  private long resyncs;

  /** An index of {@code model}'s blocks of {@code tokensPerBlock} tokens. */
  public PrefixIndex(String model, int tokensPerBlock) {
    this.model = Objects.requireNonNull(model, "model");
    if (tokensPerBlock < 1) {
      throw new IllegalArgumentException("tokens per block is at least 1, got " + tokensPerBlock);
    }
    this.tokensPerBlock = tokensPerBlock;
  }

  /** Indexes {@code engineId} from its first snapshot on; nothing if it is registered already. */
  public synchronized void register(String engineId) {
    EventFields.requireEngineId(engineId);
    engines.computeIfAbsent(engineId, this::newEngine);
  }

  private Engine newEngine(String engineId) {
    int slot = slotsInUse.nextClearBit(0);
    slotsInUse.set(slot);
    holders.write(
        side -> {
          side.name(slot, engineId);
          return 0;
        });
    return new Engine(engineId, slot);
  }

  /** Forgets {@code engineId} and every block it held; whether it was registered. */
  public synchronized boolean remove(String engineId) {
    Engine engine = engines.remove(engineId);
    if (engine == null) {
      return false;
    }
    int blocks = engine.blocks;
    holders.write(
        side -> {
          side.table.clearSlot(engine.slot, blocks);
          side.name(engine.slot, null);
          return 0;
        });
    slotsInUse.clear(engine.slot);
    return true;
  }

  /** The engines registered. */
  public synchronized Set<String> engines() {
    return Set.copyOf(engines.keySet());
  }

  /** Whether {@code engineId} is registered and needs a snapshot before its batches apply. */
  public synchronized boolean needsSnapshot(String engineId) {
    Engine engine = engines.get(engineId);
    return engine != null && !engine.synced;
  }

  /**
   * Whether {@code snapshot} is newer than what the index holds of its engine: the engine is
   * registered and needs a snapshot, or was indexed from another incarnation, or from an earlier
   * batch. A reader that receives snapshots and batches on separate paths resyncs only from such a
   * snapshot: an older one would take the engine back and make its next batch a gap.
   */
  public synchronized boolean isNewer(CacheSnapshot snapshot) {
    Engine engine = engines.get(snapshot.engineId());
    return engine != null
        && (!engine.synced
            || engine.incarnation == null
            || engine.incarnation != snapshot.incarnation()
            || engine.sequence < snapshot.sequence());
  }

  /**
   * Replaces everything the index holds of the snapshot's engine with the snapshot, writing only
   * what changed: the blocks the engine no longer holds are cleared, the others kept.
   */
  public Outcome resync(CacheSnapshot snapshot) {
    // Sorted outside the lock: a snapshot holds tens of thousands of blocks.
    long[] incoming =
        snapshot.blockHashes().stream().mapToLong(Long::longValue).sorted().distinct().toArray();
    synchronized (this) {
      Engine engine = engines.get(snapshot.engineId());
      if (engine == null) {
        return count(Outcome.UNKNOWN_ENGINE);
      }
      if (!snapshot.model().equals(model) || snapshot.tokensPerBlock() != tokensPerBlock) {
        return count(Outcome.WRONG_MODEL);
      }
      int held = engine.blocks;
      engine.blocks =
          holders.write(
              side -> {
                if (held > 0) {
                  for (long hash : side.table.hashesOf(engine.slot, held)) {
                    if (Arrays.binarySearch(incoming, hash) < 0) {
                      side.table.clear(hash, engine.slot);
                    }
                  }
                }
                for (long hash : incoming) {
                  side.table.set(hash, engine.slot);
                }
                return incoming.length;
              });
      engine.incarnation = snapshot.incarnation();
      engine.sequence = snapshot.sequence();
      engine.synced = true;
      resyncs++;
      return count(Outcome.APPLIED);
    }
  }

  /** Applies {@code batch} if it is the next of its engine's incarnation. */
  public synchronized Outcome apply(KvEventBatch batch) {
    Engine engine = engines.get(batch.engineId());
    if (engine == null) {
      return count(Outcome.UNKNOWN_ENGINE);
    }
    if (engine.incarnation == null) {
      return count(Outcome.NOT_SYNCED);
    }
    if (batch.incarnation() != engine.incarnation) {
      return count(Outcome.WRONG_INCARNATION);
    }
    if (!engine.synced) {
      return count(Outcome.NOT_SYNCED);
    }
    if (batch.sequence() <= engine.sequence) {
      return count(Outcome.REPEATED);
    }
    if (batch.sequence() > engine.sequence + 1) {
      engine.synced = false;
      return count(Outcome.GAP);
    }
    int held = engine.blocks;
    engine.blocks = holders.write(side -> applyTo(side.table, engine.slot, held, batch));
    engine.sequence = batch.sequence();
    return count(Outcome.APPLIED);
  }

  /**
   * How many of the prompt's leading blocks each engine holds, for the engines that hold at least
   * the first: {@code promptHashes} are the prompt's {@link BlockHashes}, in order. Costs one table
   * lookup per block matched (and one more), whatever the number of engines up to 64.
   */
  public Map<String, Integer> match(long[] promptHashes) {
    return holders.read(side -> match(side, promptHashes));
  }

  private static Map<String, Integer> match(LeftRightHolders.Side side, long[] promptHashes) {
    Map<String, Integer> matched = new LinkedHashMap<>();
    if (promptHashes.length == 0) {
      return matched;
    }
    int words = side.table.words();
    // The engines that held every block so far, and the bits of the block at hand.
    long[] alive = new long[words];
    long[] held = new long[words];
    side.table.bitsOf(promptHashes[0], alive);
    for (int i = 1; i < promptHashes.length; i++) {
      side.table.bitsOf(promptHashes[i], held);
      boolean any = false;
      for (int w = 0; w < words; w++) {
        // An engine counts a block only if it held every block before it too.
        putAll(matched, side.names, w, alive[w] & ~held[w], i);
        alive[w] &= held[w];
        any |= alive[w] != 0;
      }
      if (!any) {
        return matched;
      }
    }
    for (int w = 0; w < words; w++) {
      putAll(matched, side.names, w, alive[w], promptHashes.length);
    }
    return matched;
  }

  /**
   * Puts {@code blocks} for each engine ({@code names} by slot) whose slot's bit is set in word
   * {@code w}'s {@code bits}.
   */
  private static void putAll(
      Map<String, Integer> matched, String[] names, int w, long bits, int blocks) {
    for (long rest = bits; rest != 0; rest &= rest - 1) {
      matched.put(names[w * 64 + Long.numberOfTrailingZeros(rest)], blocks);
    }
  }

  /** How many blocks the index holds over every engine (a block two engines hold counts twice). */
  public synchronized long size() {
    long n = 0;
    for (Engine e : engines.values()) {
      n += e.blocks;
    }
    return n;
  }

  /** How many blocks {@code engineId} holds as far as the index knows (0 if unknown). */
  public synchronized int blocksOf(String engineId) {
    Engine engine = engines.get(engineId);
    return engine == null ? 0 : engine.blocks;
  }

  /** How many batches and snapshots ended each way, and how many snapshots were applied. */
  public synchronized Stats stats() {
    return new Stats(new EnumMap<>(outcomes), resyncs, size(), engines.size());
  }

  /**
   * What the index did so far.
   *
   * @param outcomes batches and snapshots offered, by outcome
   * @param resyncs snapshots applied
   * @param blocks blocks held over every engine
   * @param engines engines registered
   */
  public record Stats(Map<Outcome, Long> outcomes, long resyncs, long blocks, int engines) {
    /** Copies the map. */
    public Stats {
      outcomes = Map.copyOf(outcomes);
    }

    /** How many ended {@code outcome}. */
    public long count(Outcome outcome) {
      return outcomes.getOrDefault(outcome, 0L);
    }
  }

  private Outcome count(Outcome outcome) {
    outcomes.merge(outcome, 1L, Long::sum);
    return outcome;
  }

  /**
   * Applies {@code batch}'s events to {@code table} for the engine of {@code slot}, which held
   * {@code held} blocks; how many it holds after.
   */
  private static int applyTo(HolderTable table, int slot, int held, KvEventBatch batch) {
    int blocks = held;
    for (KvEvent event : batch.events()) {
      if (event instanceof KvEvent.Stored stored) {
        for (long hash : stored.blockHashes()) {
          blocks += table.set(hash, slot) ? 1 : 0;
        }
      } else if (event instanceof KvEvent.Removed removed) {
        for (long hash : removed.blockHashes()) {
          blocks -= table.clear(hash, slot) ? 1 : 0;
        }
      } else if (blocks > 0) {
        table.clearSlot(slot, blocks);
        blocks = 0;
      }
    }
    return blocks;
  }

  /** One engine as the index knows it. */
  private static final class Engine {
    final String id;
    final int slot;
    int blocks;
    Long incarnation;
    long sequence;
    boolean synced;

    Engine(String id, int slot) {
      this.id = id;
      this.slot = slot;
    }
  }
}
