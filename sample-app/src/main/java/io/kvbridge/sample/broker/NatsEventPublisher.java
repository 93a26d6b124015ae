package io.kvbridge.sample.broker;

import io.kvbridge.events.CacheSnapshot;
import io.kvbridge.events.EventAuthenticator;
import io.kvbridge.events.KvEventBatch;
import io.kvbridge.events.KvEventLog;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.JetStream;
import io.nats.client.KeyValue;
import io.nats.client.PublishOptions;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.json.JsonMapper;

/**
 * Publishes one engine's KV events to NATS ({@link NatsEvents} names where): every batch the engine
 * closes, in order, and its snapshot, put at start, at most every {@code snapshot-interval} while
 * its cache changes, when a reader asks for one (it found a gap), and after a batch could not be
 * published; its key is deleted when the publisher closes, so readers drop the engine.
 *
 * <p>Nothing here runs on the engine's thread: batches are queued (at most {@code kept-batches};
 * beyond that, or while the server cannot be reached, they are dropped and a snapshot follows once
 * it can) and a sender thread publishes them, each acknowledged by the stream before the next.
 *
 * <p>Thread-safe.
 */
public final class NatsEventPublisher implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(NatsEventPublisher.class);

  /** How soon a snapshot that could not be put is tried again. */
  private static final Duration RETRY = Duration.ofMillis(100);

  /** Wakes the sender without a batch: a snapshot was asked for, or the publisher closes. */
  private static final Object WAKE = new Object();

  private final NatsEvents nats;
  private final KvEventLog log;
  private final Optional<EventAuthenticator> auth;
  private final JsonMapper json;
  private final JetStream jetStream;
  private final KeyValue snapshots;
  private final LinkedBlockingQueue<Object> queue;
  private final Consumer<KvEventBatch> listener;
  private final Dispatcher resyncRequests;
  private final Thread sender;
  private final AtomicLong published = new AtomicLong();
  private final AtomicLong lost = new AtomicLong();
  private final AtomicLong snapshotsPut = new AtomicLong();
  private volatile boolean running = true;
  private volatile boolean snapshotWanted = true;

  /**
   * Starts publishing {@code log}'s batches through {@code nats}, signed by {@code auth} if given;
   * its first snapshot follows at once.
   */
  public NatsEventPublisher(
      NatsEvents nats, KvEventLog log, Optional<EventAuthenticator> auth, JsonMapper json) {
    this.nats = nats;
    this.log = log;
    this.auth = auth;
    this.json = json;
    this.jetStream = nats.jetStream();
    this.snapshots = nats.snapshots();
    int kept = nats.settings().keptBatches();
    this.queue = new LinkedBlockingQueue<>(kept + 1);
    this.listener =
        batch -> {
          if (!queue.offer(batch)) {
            // The sender is behind by more than the stream keeps: a snapshot replaces them.
            lost.incrementAndGet();
            snapshotWanted = true;
          }
        };
    Connection connection = nats.connection();
    this.resyncRequests =
        connection.createDispatcher(
            message -> {
              snapshotWanted = true;
              queue.offer(WAKE);
            });
    resyncRequests.subscribe(nats.resyncSubject(log.engineId()));
    // The server may have restarted without what it stored last: a fresh snapshot covers it.
    nats.onReconnect(
        () -> {
          snapshotWanted = true;
          queue.offer(WAKE);
        });
    this.sender = new Thread(this::run, "kv-events-nats-" + log.engineId());
    sender.setDaemon(true);
    // Listening first: a batch closed before the first snapshot is published too (readers find it
    // repeated), never lost between the two.
    log.subscribe(listener);
    sender.start();
  }

  /** Batches published and acknowledged. */
  public long published() {
    return published.get();
  }

  /** Batches that could not be published (a snapshot followed). */
  public long lost() {
    return lost.get();
  }

  /** Snapshots put. */
  public long snapshotsPut() {
    return snapshotsPut.get();
  }

  private void run() {
    Duration interval = nats.settings().snapshotInterval();
    long lastSnapshotNanos = 0;
    long lastSnapshotSequence = -1;
    while (running) {
      long now = System.nanoTime();
      boolean due =
          log.sequence() != lastSnapshotSequence && now - lastSnapshotNanos >= interval.toNanos();
      if (snapshotWanted || due) {
        long sequence = putSnapshot();
        if (sequence >= 0) {
          lastSnapshotSequence = sequence;
          lastSnapshotNanos = now;
        }
      }
      Object next;
      try {
        // A snapshot wanted but not put (the server is away) is tried again soon.
        next =
            queue.poll(
                snapshotWanted ? RETRY.toMillis() : interval.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        return;
      }
      if (next instanceof KvEventBatch batch) {
        publish(batch);
      }
    }
  }

  private void publish(KvEventBatch batch) {
    Map<String, Object> map = auth.map(a -> a.signed(batch)).orElseGet(batch::toMap);
    try {
      jetStream.publish(
          nats.subject(batch.engineId()),
          json.writeValueAsBytes(map),
          PublishOptions.builder()
              .messageId(
                  NatsEvents.messageId(batch.engineId(), batch.incarnation(), batch.sequence()))
              .build());
      published.incrementAndGet();
    } catch (Exception e) {
      // Readers find the gap; the snapshot that follows once the server answers closes it.
      lost.incrementAndGet();
      snapshotWanted = true;
      LOG.warn(
          "KV event batch {} of {} not published to {}: {}",
          batch.sequence(),
          batch.engineId(),
          nats.settings().url(),
          e.getMessage());
    }
  }

  /** Puts the engine's snapshot; the last batch it includes, or -1 if it could not be put. */
  private long putSnapshot() {
    CacheSnapshot snapshot = log.snapshot();
    Map<String, Object> map = auth.map(a -> a.signed(snapshot)).orElseGet(snapshot::toMap);
    byte[] bytes = json.writeValueAsBytes(map);
    long maxPayload = nats.connection().getMaxPayload();
    if (maxPayload > 0 && bytes.length > maxPayload) {
      LOG.error(
          "the KV event snapshot of {} is {} bytes, over the NATS server's max_payload of {}: raise"
              + " max_payload on the server",
          snapshot.engineId(),
          bytes.length,
          maxPayload);
      snapshotWanted = false;
      return -1;
    }
    try {
      snapshots.put(NatsEvents.key(snapshot.engineId()), bytes);
      snapshotsPut.incrementAndGet();
      snapshotWanted = false;
      return snapshot.sequence();
    } catch (Exception e) {
      snapshotWanted = true;
      LOG.warn(
          "KV event snapshot of {} not put to {}: {}",
          snapshot.engineId(),
          nats.settings().url(),
          e.getMessage());
      return -1;
    }
  }

  /**
   * Stops publishing and deletes the engine's snapshot, so readers drop it; the connection stays
   * open for its owner to close.
   */
  @Override
  public void close() {
    running = false;
    log.unsubscribe(listener);
    queue.offer(WAKE);
    sender.interrupt();
    try {
      sender.join(Duration.ofSeconds(2).toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    nats.connection().closeDispatcher(resyncRequests);
    try {
      snapshots.delete(NatsEvents.key(log.engineId()));
    } catch (Exception e) {
      LOG.debug("snapshot of {} not deleted: {}", log.engineId(), e.getMessage());
    }
  }
}
