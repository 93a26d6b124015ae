package io.kvbridge.events;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * An engine's side of KV events: it records what its caches store and remove ({@link #stored},
 * {@link #removed}, {@link #cleared}) as they change, and closes a batch of them at each step
 * ({@link #flush}); readers start from a {@link #snapshot} and then follow the batches numbered
 * after it, from the ones kept here ({@link #since}) or as they are flushed ({@link #subscribe}).
 *
 * <p>Batches are numbered from 1 in this log's incarnation without gaps; the last {@code retained}
 * are kept so that a reader that lost its connection resumes where it was. A reader asking for
 * batches older than those kept must start again from a snapshot ({@link #since} answers empty).
 *
 * <p>Threads: every method may be called from any thread; each is atomic, and listeners are called
 * on the thread that flushes, in batch order.
 */
public final class KvEventLog {

  private final String engineId;
  private final long incarnation;
  private final String model;
  private final int tokensPerBlock;
  private final int retained;
  private final List<KvEvent> pending = new ArrayList<>();
  private final ArrayDeque<KvEventBatch> recent = new ArrayDeque<>();
  private final Set<Long> held = new HashSet<>();
  private final List<Consumer<KvEventBatch>> listeners = new CopyOnWriteArrayList<>();
  private int pendingHashes;
  private long sequence;

  /**
   * A log of engine {@code engineId}'s incarnation {@code incarnation}, whose blocks are {@code
   * model}'s of {@code tokensPerBlock} tokens ({@link BlockHashes}), keeping its last {@code
   * retained} batches.
   */
  public KvEventLog(
      String engineId, long incarnation, String model, int tokensPerBlock, int retained) {
    EventFields.requireEngineId(engineId);
    if (retained < 1) {
      throw new IllegalArgumentException("a log keeps at least 1 batch, got " + retained);
    }
    this.engineId = engineId;
    this.incarnation = incarnation;
    this.model = model;
    this.tokensPerBlock = new BlockHashes(model, tokensPerBlock).tokensPerBlock();
    this.retained = retained;
  }

  /** The engine's id. */
  public String engineId() {
    return engineId;
  }

  /** The engine's incarnation. */
  public long incarnation() {
    return incarnation;
  }

  /** The engine now holds the blocks {@code hashes}. */
  public synchronized void stored(List<Long> hashes) {
    for (List<Long> part : parts(hashes)) {
      add(new KvEvent.Stored(part));
    }
  }

  /** The engine no longer holds the blocks {@code hashes}. */
  public synchronized void removed(List<Long> hashes) {
    for (List<Long> part : parts(hashes)) {
      add(new KvEvent.Removed(part));
    }
  }

  /** The engine holds no block any more. */
  public synchronized void cleared() {
    add(new KvEvent.Cleared());
  }

  /**
   * Closes the events recorded since the last flush into the next batch, keeps it, and hands it to
   * every listener; nothing if none were recorded.
   */
  public Optional<KvEventBatch> flush() {
    KvEventBatch batch;
    synchronized (this) {
      if (pending.isEmpty()) {
        return Optional.empty();
      }
      batch = new KvEventBatch(engineId, incarnation, ++sequence, List.copyOf(pending));
      pending.clear();
      pendingHashes = 0;
      apply(batch);
      recent.addLast(batch);
      while (recent.size() > retained) {
        recent.removeFirst();
      }
      // Listeners hear batches in order: they are called while no other flush can run.
      for (Consumer<KvEventBatch> listener : listeners) {
        listener.accept(batch);
      }
    }
    return Optional.of(batch);
  }

  /** Every block held as of the last batch flushed. */
  public synchronized CacheSnapshot snapshot() {
    return new CacheSnapshot(
        engineId, incarnation, sequence, model, tokensPerBlock, List.copyOf(held));
  }

  /**
   * The batches numbered after {@code after}, oldest first (none if it is the last); empty if some
   * of them are no longer kept, or {@code after} is beyond the last: the reader starts again from a
   * snapshot.
   */
  public synchronized Optional<List<KvEventBatch>> since(long after) {
    if (after > sequence || after < 0) {
      return Optional.empty();
    }
    long oldest = recent.isEmpty() ? sequence + 1 : recent.peekFirst().sequence();
    if (after + 1 < oldest) {
      return Optional.empty();
    }
    List<KvEventBatch> out = new ArrayList<>();
    for (KvEventBatch batch : recent) {
      if (batch.sequence() > after) {
        out.add(batch);
      }
    }
    return Optional.of(out);
  }

  /** The number of the last batch flushed (0: none yet). */
  public synchronized long sequence() {
    return sequence;
  }

  /**
   * Calls {@code listener} with every batch flushed from now on; undone by {@link #unsubscribe}.
   */
  public void subscribe(Consumer<KvEventBatch> listener) {
    listeners.add(listener);
  }

  /** Stops calling {@code listener}. */
  public void unsubscribe(Consumer<KvEventBatch> listener) {
    listeners.remove(listener);
  }

  /** {@code hashes} in parts that each fit a batch. */
  private static List<List<Long>> parts(List<Long> hashes) {
    List<List<Long>> out = new ArrayList<>();
    for (int from = 0; from < hashes.size(); from += KvEventBatch.MAX_HASHES) {
      out.add(hashes.subList(from, Math.min(hashes.size(), from + KvEventBatch.MAX_HASHES)));
    }
    return out;
  }

  private void add(KvEvent event) {
    if (pendingHashes + event.size() > KvEventBatch.MAX_HASHES) {
      // A batch names a bounded number of hashes: close this one early.
      flush();
    }
    pending.add(event);
    pendingHashes += event.size();
  }

  private void apply(KvEventBatch batch) {
    for (KvEvent event : batch.events()) {
      if (event instanceof KvEvent.Stored s) {
        held.addAll(s.blockHashes());
      } else if (event instanceof KvEvent.Removed r) {
        held.removeAll(r.blockHashes());
      } else {
        held.clear();
      }
    }
  }
}
