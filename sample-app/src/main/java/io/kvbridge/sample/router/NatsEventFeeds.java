package io.kvbridge.sample.router;

import io.kvbridge.events.CacheSnapshot;
import io.kvbridge.events.EventAuthenticator;
import io.kvbridge.events.KvEventBatch;
import io.kvbridge.events.PrefixIndex;
import io.kvbridge.sample.broker.NatsEvents;
import io.nats.client.Dispatcher;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.PushSubscribeOptions;
import io.nats.client.api.KeyValueEntry;
import io.nats.client.api.KeyValueOperation;
import io.nats.client.api.KeyValueWatcher;
import io.nats.client.impl.NatsKeyValueWatchSubscription;
import java.io.IOException;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.json.JsonMapper;

/**
 * Feeds the router's {@link PrefixIndex} from NATS ({@link NatsEvents} names where), not from the
 * nodes: every engine's latest snapshot from the key-value bucket (watched: each new one, and a
 * deleted key when an engine leaves), and every engine's batches from the stream, from the oldest
 * it keeps. A router that starts (or restarts) therefore finds each engine's latest snapshot and
 * the batches after it, and agrees with every other router reading the same broker.
 *
 * <p>Only the engines of the nodes the router follows are indexed; each node's engine id is asked
 * of the node once ({@code <base>/kv/events/snapshot}). A snapshot is applied when it is ahead of
 * what the index holds ({@link PrefixIndex#isNewer}). A batch the index refuses for a gap, or that
 * finds its engine not synced, makes the router ask the engine for a fresh snapshot (at most once a
 * second per engine, and again at each {@link #follow} while it has none); the engine puts one at
 * once. Batches of an engine's earlier incarnation, which the stream may still keep after a
 * restart, are skipped.
 *
 * <p>A malformed batch or snapshot is refused and counted; with a secret, so is one whose {@code
 * mac} is missing or wrong. The connection reconnects by itself; the stream's ordered consumer
 * resumes where it was.
 *
 * <p>Thread-safe.
 */
final class NatsEventFeeds implements EventFeeds {

  private static final Logger LOG = LoggerFactory.getLogger(NatsEventFeeds.class);

  /** How often, at most, the router asks one engine for a fresh snapshot. */
  static final Duration RESYNC_REQUEST_INTERVAL = Duration.ofSeconds(1);

  private final PrefixIndex index;
  private final NatsEvents nats;
  private final EventIntake intake;
  private final Duration timeout;
  private final Map<PooledNode, String> engines = new ConcurrentHashMap<>();
  private final Map<String, CacheSnapshot> latest = new ConcurrentHashMap<>();
  private final Map<String, Long> resyncAsked = new ConcurrentHashMap<>();
  private final Dispatcher dispatcher;
  // Guarded by this; replaced when the connection comes back.
  private NatsKeyValueWatchSubscription watch;
  private JetStreamSubscription batches;
  private boolean closed;

  /**
   * Starts reading {@code nats} into {@code index}: first every engine's latest snapshot, then the
   * stream. {@code timeout} bounds each node's answer to the router's question for its engine id.
   *
   * @throws IllegalStateException if the bucket or the stream cannot be read
   */
  NatsEventFeeds(
      PrefixIndex index,
      NatsEvents nats,
      JsonMapper json,
      Duration timeout,
      Optional<EventAuthenticator> auth) {
    this.index = index;
    this.nats = nats;
    this.intake = new EventIntake(json, auth, timeout);
    this.timeout = timeout;
    this.dispatcher = nats.connection().createDispatcher();
    subscribe();
    // A restarted server may have lost its consumers: read again, snapshots first.
    nats.onReconnect(this::resubscribe);
  }

  /**
   * Watches the snapshots, waits for the latest of each engine, then reads the stream from the
   * oldest batch it keeps: an engine's batch is applied once its snapshot is.
   */
  private void subscribe() {
    CountDownLatch initialSnapshots = new CountDownLatch(1);
    try {
      NatsKeyValueWatchSubscription watching =
          nats.snapshots()
              .watchAll(
                  new KeyValueWatcher() {
                    @Override
                    public void watch(KeyValueEntry entry) {
                      onSnapshot(entry);
                    }

                    @Override
                    public void endOfData() {
                      initialSnapshots.countDown();
                    }
                  });
      if (!initialSnapshots.await(timeout.toMillis() * 5, TimeUnit.MILLISECONDS)) {
        LOG.warn("the snapshots in bucket {} took long to read", nats.settings().bucket());
      }
      JetStreamSubscription reading =
          nats.jetStream()
              .subscribe(
                  nats.allSubjects(),
                  dispatcher,
                  this::onBatch,
                  false,
                  PushSubscribeOptions.builder().ordered(true).build());
      synchronized (this) {
        watch = watching;
        batches = reading;
      }
    } catch (IOException | JetStreamApiException e) {
      throw new IllegalStateException(
          "cannot read KV events from the NATS server at " + nats.settings().url() + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while reading KV events", e);
    }
  }

  /** Drops the subscriptions and subscribes again, after the connection came back. */
  private void resubscribe() {
    synchronized (this) {
      if (closed) {
        return;
      }
      unsubscribe();
    }
    try {
      subscribe();
    } catch (RuntimeException e) {
      intake.unreachable();
      LOG.warn("KV events not read again after the NATS server came back: {}", e.getMessage());
    }
  }

  private void unsubscribe() {
    try {
      if (watch != null) {
        watch.unsubscribe();
      }
    } catch (RuntimeException e) {
      LOG.debug("snapshot watch not closed: {}", e.getMessage());
    }
    try {
      if (batches != null) {
        dispatcher.unsubscribe(batches);
      }
    } catch (RuntimeException e) {
      LOG.debug("batch subscription not closed: {}", e.getMessage());
    }
  }

  @Override
  public PrefixIndex index() {
    return index;
  }

  @Override
  public synchronized void follow(Collection<PooledNode> nodes) {
    if (closed) {
      return;
    }
    Set<PooledNode> wanted = Set.copyOf(nodes);
    for (PooledNode gone : List.copyOf(engines.keySet())) {
      if (!wanted.contains(gone)) {
        String engine = engines.remove(gone);
        if (!engines.containsValue(engine)) {
          index.remove(engine);
        }
      }
    }
    for (PooledNode node : nodes) {
      String known = engines.get(node);
      if (known != null) {
        // A gap found when the engine was asked a moment before: ask again, once a second at most.
        if (index.needsSnapshot(known)) {
          askForSnapshot(known);
        }
        continue;
      }
      Optional<String> engine = askEngineOf(node);
      if (engine.isEmpty()) {
        continue;
      }
      engines.put(node, engine.get());
      index.register(engine.get());
      CacheSnapshot snapshot = latest.get(engine.get());
      if (snapshot != null && index.isNewer(snapshot)) {
        index.resync(snapshot);
      }
      // The batches read before the engine was followed were passed over, and the bucket's
      // snapshot may be older than the stream's oldest batch: a fresh one closes both.
      askForSnapshot(engine.get());
    }
  }

  @Override
  public Optional<String> engineOf(PooledNode node) {
    return Optional.ofNullable(engines.get(node));
  }

  @Override
  public Map<PooledNode, Integer> cachedBlocks(Collection<PooledNode> nodes, long[] promptHashes) {
    return KvEventFeeds.matched(index, nodes, engines, promptHashes);
  }

  @Override
  public String source() {
    return nats.settings().url().toString();
  }

  @Override
  public EventIntake intake() {
    return intake;
  }

  /** The engine {@code node} runs, asked of the node; empty (and counted) if it does not answer. */
  private Optional<String> askEngineOf(PooledNode node) {
    try {
      return Optional.of(
          CacheSnapshot.fromMap(intake.get(node.kvSnapshotUrl(), timeout)).engineId());
    } catch (IOException | RuntimeException e) {
      intake.unreachable();
      LOG.debug("engine of {} not known yet: {}", node.name(), e.getMessage());
      return Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    }
  }

  private void onSnapshot(KeyValueEntry entry) {
    Optional<String> key = NatsEvents.engineOfKey(entry.getKey());
    if (key.isEmpty()) {
      return;
    }
    String engine = key.get();
    if (entry.getOperation() != KeyValueOperation.PUT) {
      // The engine left: what it held is gone with it.
      latest.remove(engine);
      synchronized (this) {
        if (engines.containsValue(engine)) {
          index.remove(engine);
          index.register(engine);
        }
      }
      return;
    }
    Optional<CacheSnapshot> read =
        intake.snapshot(entry.getValue(), Optional.of(engine), engine + " from NATS");
    if (read.isEmpty()) {
      return;
    }
    CacheSnapshot snapshot = read.get();
    latest.put(engine, snapshot);
    synchronized (this) {
      if (engines.containsValue(engine) && index.isNewer(snapshot)) {
        index.resync(snapshot);
      }
    }
  }

  private void onBatch(Message message) {
    Optional<String> subjectEngine = engineOfSubject(message.getSubject());
    if (subjectEngine.isEmpty()) {
      return; // Not a subject this class reads.
    }
    Optional<KvEventBatch> read =
        intake.batch(message.getData(), subjectEngine, subjectEngine.get() + " from NATS");
    if (read.isEmpty()) {
      return;
    }
    KvEventBatch batch = read.get();
    String engine = batch.engineId();
    if (!engines.containsValue(engine)) {
      return; // Not an engine of the router's pools.
    }
    CacheSnapshot snapshot = latest.get(engine);
    if (snapshot != null && snapshot.incarnation() != batch.incarnation()) {
      // Kept from an incarnation the engine's latest snapshot replaced, or ahead of it: the
      // engine's next snapshot decides.
      if (!index.needsSnapshot(engine)) {
        return;
      }
    }
    PrefixIndex.Outcome outcome = index.apply(batch);
    if (outcome == PrefixIndex.Outcome.GAP
        || outcome == PrefixIndex.Outcome.NOT_SYNCED
        || outcome == PrefixIndex.Outcome.WRONG_INCARNATION) {
      askForSnapshot(engine);
    }
  }

  /** The engine whose batches {@code subject} carries; empty if it is not one. */
  private Optional<String> engineOfSubject(String subject) {
    String prefix = nats.settings().subject() + ".";
    return subject.startsWith(prefix)
        ? NatsEvents.engineOfKey(subject.substring(prefix.length()))
        : Optional.empty();
  }

  /** Asks {@code engine} to put a fresh snapshot, unless it was asked less than a second ago. */
  private void askForSnapshot(String engine) {
    long now = System.nanoTime();
    Long last = resyncAsked.get(engine);
    if (last != null && now - last < RESYNC_REQUEST_INTERVAL.toNanos()) {
      return;
    }
    resyncAsked.put(engine, now);
    nats.connection().publish(nats.resyncSubject(engine), new byte[0]);
  }

  @Override
  public synchronized void close() {
    closed = true;
    unsubscribe();
    nats.connection().closeDispatcher(dispatcher);
    Set<String> known = new HashSet<>(engines.values());
    known.forEach(index::remove);
    engines.clear();
    nats.close();
  }
}
