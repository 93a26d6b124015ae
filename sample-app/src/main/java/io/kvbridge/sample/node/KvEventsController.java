package io.kvbridge.sample.node;

import io.kvbridge.events.CacheSnapshot;
import io.kvbridge.events.EventAuthenticator;
import io.kvbridge.events.KvEventBatch;
import io.kvbridge.events.KvEventLog;
import java.io.IOException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.springframework.http.MediaType;
import org.springframework.util.ReflectionUtils;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseBody;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

/**
 * A node's KV events ({@code docs/events.md}): {@code GET <path>/kv/events/snapshot} answers what
 * its prefix cache holds now, and {@code GET <path>/kv/events?after=N} streams, as Server-Sent
 * Events, every batch numbered after {@code N} (those kept, then each as the engine closes it; the
 * {@code Last-Event-ID} header a reconnecting client sends does the same), each an event {@code
 * batch} whose id is the batch's number. Without {@code after} the stream starts with the next
 * batch. A reader the node cannot resume (its batches are no longer kept, or it names a batch the
 * node never published) or that falls too far behind gets one event {@code resync} naming the last
 * batch, and the stream ends: it fetches a snapshot and reconnects after it.
 */
public final class KvEventsController {

  /** The most batches a stream may have waiting to be sent before its reader is told to resync. */
  static final int MAX_BEHIND = 1024;

  /** How long a stream stays open; its reader reconnects after it with {@code Last-Event-ID}. */
  static final Duration STREAM_TIMEOUT = Duration.ofMinutes(10);

  private static final Method SNAPSHOT =
      ReflectionUtils.findMethod(KvEventsController.class, "snapshot");
  private static final Method STREAM =
      ReflectionUtils.findMethod(KvEventsController.class, "stream", Long.class, String.class);

  // Sends every stream's events, so that no engine thread waits for a reader's socket.
  private static final ExecutorService SENDERS =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "kv-events-sender");
            t.setDaemon(true);
            return t;
          });

  private final KvEventLog log;
  private final Optional<EventAuthenticator> auth;
  private final Set<SseEmitter> open = ConcurrentHashMap.newKeySet();

  /**
   * Serves the KV events of {@code node}'s engine, each snapshot and batch signed by {@code auth}
   * if given.
   */
  public KvEventsController(Node node, Optional<EventAuthenticator> auth) {
    this.log = node.engine().kvEvents();
    this.auth = auth;
  }

  /** What the engine's prefix cache holds now, as of its last batch. */
  @ResponseBody
  public Map<String, Object> snapshot() {
    CacheSnapshot snapshot = log.snapshot();
    return auth.map(a -> a.signed(snapshot)).orElseGet(snapshot::toMap);
  }

  /** The batches after {@code after} (or the {@code Last-Event-ID}), then each new one. */
  @ResponseBody
  public SseEmitter stream(
      @RequestParam(name = "after", required = false) Long after,
      @RequestHeader(name = "Last-Event-ID", required = false) String lastEventId) {
    SseEmitter emitter = new SseEmitter(STREAM_TIMEOUT.toMillis());
    Stream stream = new Stream(emitter);
    // Without a resume point the stream starts after the last batch flushed before it listens.
    long now = log.sequence();
    // Listen first, then read the backlog: a batch flushed in between is in both, and sent once.
    log.subscribe(stream);
    open.add(emitter);
    Runnable closed =
        () -> {
          if (stream.closed.compareAndSet(false, true)) {
            log.unsubscribe(stream);
            open.remove(emitter);
          }
        };
    emitter.onCompletion(closed);
    emitter.onTimeout(closed);
    emitter.onError(e -> closed.run());
    long from = resumePoint(after, lastEventId).orElse(now);
    Optional<List<KvEventBatch>> backlog = log.since(from);
    if (backlog.isEmpty()) {
      stream.resync();
    } else {
      stream.start(from, backlog.get());
    }
    return emitter;
  }

  /**
   * Ends every open stream, as the node shuts down: its readers reconnect elsewhere or later, and
   * the server need not wait for streams that never end by themselves.
   */
  void closeStreams() {
    for (SseEmitter emitter : List.copyOf(open)) {
      emitter.complete();
    }
  }

  /** Answers {@code GET <path>/kv/events} and {@code GET <path>/kv/events/snapshot}. */
  void mapAt(String path, RequestMappingHandlerMapping mappings) {
    map(path + "/kv/events/snapshot", SNAPSHOT, MediaType.APPLICATION_JSON_VALUE, mappings);
    map(path + "/kv/events", STREAM, MediaType.TEXT_EVENT_STREAM_VALUE, mappings);
  }

  private static Optional<Long> resumePoint(Long after, String lastEventId) {
    if (after != null) {
      return Optional.of(after);
    }
    if (lastEventId != null && !lastEventId.isBlank()) {
      try {
        return Optional.of(Long.parseLong(lastEventId.trim()));
      } catch (NumberFormatException e) {
        // An id this node never sent: the reader starts again from a snapshot.
        return Optional.of(-1L);
      }
    }
    return Optional.empty();
  }

  private void map(
      String path, Method handler, String produces, RequestMappingHandlerMapping mappings) {
    NodeController.register(
        mappings,
        RequestMappingInfo.paths(path).methods(RequestMethod.GET).produces(produces),
        this,
        handler);
  }

  /** One reader's stream: batches queued as the engine closes them, sent in order by a sender. */
  private final class Stream implements Consumer<KvEventBatch> {
    private final SseEmitter emitter;
    private final ConcurrentLinkedQueue<KvEventBatch> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queued = new AtomicInteger();
    private final AtomicBoolean draining = new AtomicBoolean();
    private final AtomicBoolean started = new AtomicBoolean();
    final AtomicBoolean closed = new AtomicBoolean();
    // The last batch sent; only the draining sender touches it once started.
    private long sent;

    Stream(SseEmitter emitter) {
      this.emitter = emitter;
    }

    /** Runs on the engine thread: never blocks. */
    @Override
    public void accept(KvEventBatch batch) {
      if (queued.incrementAndGet() > MAX_BEHIND) {
        log.unsubscribe(this);
        SENDERS.execute(this::resync);
        return;
      }
      queue.add(batch);
      drainLater();
    }

    void start(long after, List<KvEventBatch> backlog) {
      sent = after;
      for (KvEventBatch batch : backlog) {
        if (!send(batch)) {
          return;
        }
      }
      started.set(true);
      drainLater();
    }

    void resync() {
      try {
        emitter.send(SseEmitter.event().name("resync").data(Map.of("seq", log.sequence())));
        emitter.complete();
      } catch (IOException | IllegalStateException e) {
        emitter.completeWithError(e);
      }
    }

    private void drainLater() {
      if (started.get() && draining.compareAndSet(false, true)) {
        SENDERS.execute(this::drain);
      }
    }

    private void drain() {
      try {
        for (KvEventBatch batch = queue.poll(); batch != null; batch = queue.poll()) {
          queued.decrementAndGet();
          if (!send(batch)) {
            return;
          }
        }
      } finally {
        draining.set(false);
      }
      if (!queue.isEmpty()) {
        drainLater();
      }
    }

    /** Sends {@code batch} unless it was sent already; whether the stream is still open. */
    private boolean send(KvEventBatch batch) {
      if (batch.sequence() <= sent || closed.get()) {
        return !closed.get();
      }
      try {
        emitter.send(
            SseEmitter.event()
                .id(Long.toString(batch.sequence()))
                .name("batch")
                .data(
                    auth.map(a -> a.signed(batch)).orElseGet(batch::toMap),
                    MediaType.APPLICATION_JSON));
        sent = batch.sequence();
        return true;
      } catch (IOException | IllegalStateException e) {
        emitter.completeWithError(e);
        return false;
      }
    }
  }
}
