package io.kvbridge.benchmarks.routing;

import io.kvbridge.events.CacheSnapshot;
import io.kvbridge.events.KvEventBatch;
import io.kvbridge.events.PrefixIndex;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The oracle's view of the decode nodes' caches: it follows each node's own KV events (its
 * snapshot, then its stream of batches over HTTP) into a {@link PrefixIndex} of its own,
 * independent of the router, and answers how many of a prompt's leading blocks the best-placed
 * decode node holds.
 */
final class CacheMirror implements AutoCloseable {

  private final PrefixIndex index;
  private final List<Thread> threads = new ArrayList<>();
  private final List<InputStream> open = new ArrayList<>();
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private volatile boolean running = true;

  CacheMirror(PrefixIndex index, Fleet fleet, List<String> nodes) {
    this.index = index;
    for (String node : nodes) {
      Thread thread = new Thread(() -> follow(fleet.base(node)), "mirror-" + node);
      thread.setDaemon(true);
      threads.add(thread);
      thread.start();
    }
  }

  /** The most of {@code promptHashes}' leading blocks any followed node holds. */
  int bestMatch(long[] promptHashes) {
    return index.match(promptHashes).values().stream().mapToInt(Integer::intValue).max().orElse(0);
  }

  /** Whether every followed node's snapshot is applied. */
  boolean synced(int nodes) {
    return index.engines().size() == nodes
        && index.engines().stream().noneMatch(index::needsSnapshot);
  }

  private void follow(String base) {
    while (running) {
      try {
        Map<String, Object> map = read(URI.create(base + "/kv/events/snapshot"));
        CacheSnapshot snapshot = CacheSnapshot.fromMap(map);
        index.register(snapshot.engineId());
        index.resync(snapshot);
        stream(URI.create(base + "/kv/events?after=" + snapshot.sequence()));
      } catch (IOException | RuntimeException e) {
        if (running) {
          Fleet.sleep(200);
        }
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private void stream(URI url) throws IOException, InterruptedException {
    HttpResponse<InputStream> response =
        http.send(
            HttpRequest.newBuilder(url).header("Accept", "text/event-stream").GET().build(),
            HttpResponse.BodyHandlers.ofInputStream());
    try (InputStream body = response.body()) {
      synchronized (open) {
        open.add(body);
      }
      BufferedReader lines =
          new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8));
      String event = "";
      for (String line = lines.readLine(); line != null && running; line = lines.readLine()) {
        if (line.startsWith("event:")) {
          event = line.substring("event:".length()).trim();
        } else if (line.startsWith("data:") && event.equals("batch")) {
          @SuppressWarnings("unchecked")
          Map<String, Object> map =
              Fleet.JSON.readValue(line.substring("data:".length()).trim(), Map.class);
          PrefixIndex.Outcome outcome = index.apply(KvEventBatch.fromMap(map));
          if (outcome != PrefixIndex.Outcome.APPLIED && outcome != PrefixIndex.Outcome.REPEATED) {
            return; // from the snapshot again
          }
        } else if (event.equals("resync")) {
          return;
        }
      }
    }
  }

  private Map<String, Object> read(URI url) throws IOException, InterruptedException {
    HttpResponse<byte[]> response =
        http.send(
            HttpRequest.newBuilder(url).timeout(Duration.ofSeconds(10)).GET().build(),
            HttpResponse.BodyHandlers.ofByteArray());
    if (response.statusCode() != 200) {
      throw new IOException(url + " answered " + response.statusCode());
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> map = Fleet.JSON.readValue(response.body(), Map.class);
    return map;
  }

  @Override
  public void close() {
    running = false;
    synchronized (open) {
      for (InputStream stream : open) {
        try {
          stream.close();
        } catch (IOException e) {
          // ending the read is all that is wanted
        }
      }
    }
    threads.forEach(Thread::interrupt);
  }
}
