package io.kvbridge.sample.router;

import io.kvbridge.events.CacheSnapshot;
import io.kvbridge.events.EventAuthenticator;
import io.kvbridge.events.KvEventBatch;
import io.kvbridge.events.PrefixIndex;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.json.JsonMapper;

/**
 * Follows the KV events of every node of the router's pools into one {@link PrefixIndex}: for each
 * node a thread fetches its snapshot ({@code <base>/kv/events/snapshot}), registers its engine and
 * resyncs the index from it, then follows its stream ({@code <base>/kv/events?after=N}), applying
 * each batch. A batch the index refuses for a gap, or a stream that ends or tells it to resync,
 * sends the thread back to the snapshot; a node that cannot be reached is tried again every {@code
 * retry}. A node that leaves the pools ({@link #follow}) is no longer followed and its entries
 * leave the index at once.
 *
 * <p>A batch that names another engine than the node's snapshot, or that is malformed, is refused,
 * counted and never applied.
 *
 * <p>Threads: {@link #follow}, {@link #engineOf} and {@link #close} may be called from any thread.
 */
final class KvEventFeeds implements EventFeeds {

  private static final Logger LOG = LoggerFactory.getLogger(KvEventFeeds.class);

  private final PrefixIndex index;
  private final EventIntake intake;
  private final Duration retry;
  private final Map<PooledNode, Feed> feeds = new HashMap<>();
  private final Map<PooledNode, String> engines = new ConcurrentHashMap<>();
  private boolean closed;

  /**
   * Feeds {@code index}, reading JSON with {@code json}, retrying a lost node every {@code retry}.
   * With {@code auth}, only a snapshot or batch whose {@code mac} it verifies is applied; the rest
   * are refused and counted.
   */
  KvEventFeeds(
      PrefixIndex index,
      JsonMapper json,
      Duration connectTimeout,
      Duration retry,
      Optional<EventAuthenticator> auth) {
    this.index = index;
    this.intake = new EventIntake(json, auth, connectTimeout);
    this.retry = retry;
  }

  /** The index the feeds keep. */
  @Override
  public PrefixIndex index() {
    return index;
  }

  /**
   * Follows exactly {@code nodes}: starts a feed for each node not followed yet, stops the feed of
   * each node no longer among them and drops its engine from the index.
   */
  @Override
  public synchronized void follow(Collection<PooledNode> nodes) {
    if (closed) {
      return;
    }
    Set<PooledNode> wanted = Set.copyOf(nodes);
    for (PooledNode gone : List.copyOf(feeds.keySet())) {
      if (!wanted.contains(gone)) {
        feeds.remove(gone).stop();
        String engine = engines.remove(gone);
        if (engine != null) {
          index.remove(engine);
        }
      }
    }
    for (PooledNode node : nodes) {
      feeds.computeIfAbsent(
          node,
          n -> {
            Feed feed = new Feed(n);
            feed.thread.start();
            return feed;
          });
    }
  }

  /** The engine {@code node} last said it runs, once its snapshot was read. */
  @Override
  public Optional<String> engineOf(PooledNode node) {
    return Optional.ofNullable(engines.get(node));
  }

  /**
   * For each of {@code nodes} whose engine the index knows, the prompt's leading blocks it holds.
   */
  @Override
  public Map<PooledNode, Integer> cachedBlocks(Collection<PooledNode> nodes, long[] promptHashes) {
    return matched(index, nodes, engines, promptHashes);
  }

  /**
   * For each of {@code nodes} whose engine ({@code engines}) {@code index} knows, the prompt's
   * leading blocks it holds.
   */
  static Map<PooledNode, Integer> matched(
      PrefixIndex index,
      Collection<PooledNode> nodes,
      Map<PooledNode, String> engines,
      long[] promptHashes) {
    Map<String, Integer> matched = index.match(promptHashes);
    Map<PooledNode, Integer> out = new LinkedHashMap<>();
    for (PooledNode node : nodes) {
      String engine = engines.get(node);
      if (engine != null) {
        out.put(node, matched.getOrDefault(engine, 0));
      }
    }
    return out;
  }

  @Override
  public String source() {
    return "http";
  }

  @Override
  public EventIntake intake() {
    return intake;
  }

  @Override
  public synchronized void close() {
    closed = true;
    feeds.values().forEach(Feed::stop);
    feeds.clear();
  }

  /** One node's feed: a thread that resyncs from its snapshot and follows its stream. */
  private final class Feed {
    private final PooledNode node;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile InputStream open;

    Feed(PooledNode node) {
      this.node = node;
      this.thread = new Thread(this::run, "kv-events-" + node.name());
      this.thread.setDaemon(true);
    }

    void stop() {
      running = false;
      thread.interrupt();
      InputStream stream = open;
      if (stream != null) {
        try {
          stream.close();
        } catch (IOException e) {
          // Closing is how the blocked read ends; nothing else to do.
        }
      }
    }

    private void run() {
      while (running) {
        try {
          long after = resync();
          follow(after);
        } catch (IOException | RuntimeException e) {
          // Not reachable yet (or its server has no port yet), gone, or an answer that is not a
          // snapshot or a stream: the next try starts again from the snapshot.
          if (!running) {
            return;
          }
          if (!(e instanceof RefusedSnapshotException)) {
            intake.unreachable();
          }
          LOG.debug("KV events of {}: {}; trying again in {}", node.name(), e.getMessage(), retry);
          pause();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }

    /** Reads the node's snapshot into the index; the last batch it includes. */
    private long resync() throws IOException, InterruptedException {
      CacheSnapshot snapshot =
          intake
              .snapshot(intake.get(node.kvSnapshotUrl(), retry.multipliedBy(10)), node.name())
              .orElseThrow(() -> new RefusedSnapshotException("the snapshot was refused"));
      synchronized (KvEventFeeds.this) {
        if (!running) {
          return snapshot.sequence();
        }
        String before = engines.put(node, snapshot.engineId());
        if (before != null && !before.equals(snapshot.engineId())) {
          index.remove(before);
        }
        index.register(snapshot.engineId());
      }
      PrefixIndex.Outcome outcome = index.resync(snapshot);
      if (outcome != PrefixIndex.Outcome.APPLIED) {
        throw new IOException("the index refused the snapshot: " + outcome);
      }
      return snapshot.sequence();
    }

    /** Follows the node's stream from batch {@code after} until it ends or needs a resync. */
    private void follow(long after) throws IOException, InterruptedException {
      URI url = URI.create(node.kvEventsUrl() + "?after=" + after);
      HttpResponse<InputStream> response =
          intake
              .http()
              .send(
                  HttpRequest.newBuilder(url).header("Accept", "text/event-stream").GET().build(),
                  HttpResponse.BodyHandlers.ofInputStream());
      try (InputStream body = response.body()) {
        open = body;
        if (response.statusCode() != 200) {
          throw new IOException("event stream answered " + response.statusCode());
        }
        BufferedReader lines =
            new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8));
        String event = "message";
        StringBuilder data = new StringBuilder();
        for (String line = lines.readLine(); line != null && running; line = lines.readLine()) {
          if (line.isEmpty()) {
            if (!dispatch(event, data.toString())) {
              return;
            }
            event = "message";
            data.setLength(0);
          } else if (line.startsWith("event:")) {
            event = line.substring("event:".length()).trim();
          } else if (line.startsWith("data:")) {
            data.append(line.substring("data:".length()).trim());
          }
        }
      } finally {
        open = null;
      }
    }

    /** Handles one event of the stream; whether to go on following it. */
    private boolean dispatch(String event, String data) {
      if (event.equals("resync")) {
        return false;
      }
      if (!event.equals("batch") || data.isEmpty()) {
        return true;
      }
      Optional<KvEventBatch> batch =
          intake.batch(
              data.getBytes(StandardCharsets.UTF_8),
              Optional.ofNullable(engines.get(node)),
              node.name());
      if (batch.isEmpty()) {
        return true;
      }
      PrefixIndex.Outcome outcome = index.apply(batch.get());
      return outcome == PrefixIndex.Outcome.APPLIED || outcome == PrefixIndex.Outcome.REPEATED;
    }

    private void pause() {
      try {
        Thread.sleep(retry.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        running = false;
      }
    }
  }

  /** A snapshot refused (and counted) as malformed or unauthenticated, not as unreachable. */
  private static final class RefusedSnapshotException extends IOException {
    private static final long serialVersionUID = 1L;

    RefusedSnapshotException(String message) {
      super(message);
    }
  }
}
