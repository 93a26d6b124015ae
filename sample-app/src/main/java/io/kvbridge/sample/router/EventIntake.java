package io.kvbridge.sample.router;

import io.kvbridge.events.CacheSnapshot;
import io.kvbridge.events.EventAuthenticator;
import io.kvbridge.events.KvEventBatch;
import io.kvbridge.events.MalformedEventException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * What every feed of the router's index does with what it reads, from a node or a broker: reads a
 * snapshot or a batch from its JSON, checks its {@code mac} when the deployment has a secret, and
 * counts what it refuses (malformed or another engine's: refused; a {@code mac} missing or wrong:
 * unauthenticated) and what it could not read (unreachable). Also reads a node's JSON over HTTP.
 *
 * <p>Thread-safe.
 */
final class EventIntake {

  private static final Logger LOG = LoggerFactory.getLogger(EventIntake.class);

  private final JsonMapper json;
  private final Optional<EventAuthenticator> auth;
  private final HttpClient http;
  private final AtomicLong refused = new AtomicLong();
  private final AtomicLong unauthenticated = new AtomicLong();
  private final AtomicLong unreachable = new AtomicLong();

  /** Reads JSON with {@code json}, checks with {@code auth} if given, connects within a timeout. */
  EventIntake(JsonMapper json, Optional<EventAuthenticator> auth, Duration connectTimeout) {
    this.json = json;
    this.auth = auth;
    this.http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(connectTimeout)
            .build();
  }

  /** The HTTP client nodes are read with. */
  HttpClient http() {
    return http;
  }

  /**
   * The JSON object {@code url} answers within {@code timeout}.
   *
   * @throws IOException if it cannot be read, answers anything but 200 or is not JSON
   */
  Map<String, Object> get(URI url, Duration timeout) throws IOException, InterruptedException {
    HttpResponse<byte[]> response =
        http.send(
            HttpRequest.newBuilder(url).timeout(timeout).GET().build(),
            HttpResponse.BodyHandlers.ofByteArray());
    if (response.statusCode() != 200) {
      throw new IOException(url + " answered " + response.statusCode());
    }
    try {
      return map(response.body());
    } catch (JacksonException e) {
      throw new IOException(url + " answered what is not JSON: " + e.getOriginalMessage(), e);
    }
  }

  /**
   * The snapshot {@code bytes} hold, its {@code mac} checked; empty, counted and logged if it is
   * malformed, names another engine than {@code expectedEngine} (when given) or is unauthenticated.
   */
  Optional<CacheSnapshot> snapshot(byte[] bytes, Optional<String> expectedEngine, String from) {
    Map<String, Object> map;
    CacheSnapshot snapshot;
    try {
      map = map(bytes);
      snapshot = CacheSnapshot.fromMap(map);
    } catch (JacksonException | MalformedEventException | IllegalArgumentException e) {
      return refuse("the KV event snapshot of " + from, e.getMessage());
    }
    return accepted(snapshot, map, expectedEngine, from);
  }

  /** {@link #snapshot(byte[], Optional, String)} of a map already read. */
  Optional<CacheSnapshot> snapshot(Map<String, Object> map, String from) {
    CacheSnapshot snapshot;
    try {
      snapshot = CacheSnapshot.fromMap(map);
    } catch (MalformedEventException | IllegalArgumentException e) {
      return refuse("the KV event snapshot of " + from, e.getMessage());
    }
    return accepted(snapshot, map, Optional.empty(), from);
  }

  private Optional<CacheSnapshot> accepted(
      CacheSnapshot snapshot,
      Map<String, Object> map,
      Optional<String> expectedEngine,
      String from) {
    if (expectedEngine.isPresent() && !expectedEngine.get().equals(snapshot.engineId())) {
      return refuse(
          "the KV event snapshot of " + from,
          "it names engine " + snapshot.engineId() + ", not " + expectedEngine.get());
    }
    if (auth.isPresent() && !auth.get().verify(snapshot, map)) {
      return unauthenticated("the KV event snapshot of " + from, map);
    }
    return Optional.of(snapshot);
  }

  /**
   * The batch {@code bytes} hold, its {@code mac} checked; empty, counted and logged if it is
   * malformed, names another engine than {@code expectedEngine} (when given) or is unauthenticated.
   */
  Optional<KvEventBatch> batch(byte[] bytes, Optional<String> expectedEngine, String from) {
    Map<String, Object> map;
    KvEventBatch batch;
    try {
      map = map(bytes);
      batch = KvEventBatch.fromMap(map);
    } catch (JacksonException | MalformedEventException | IllegalArgumentException e) {
      return refuse("a KV event batch of " + from, e.getMessage());
    }
    if (expectedEngine.isPresent() && !expectedEngine.get().equals(batch.engineId())) {
      return refuse(
          "a KV event batch of " + from,
          "it names engine " + batch.engineId() + ", not " + expectedEngine.get());
    }
    if (auth.isPresent() && !auth.get().verify(batch, map)) {
      return unauthenticated("KV event batch " + batch.sequence() + " of " + from, map);
    }
    return Optional.of(batch);
  }

  /** Counts a read that failed. */
  void unreachable() {
    unreachable.incrementAndGet();
  }

  /** Batches and snapshots refused as malformed or another engine's. */
  long refusedCount() {
    return refused.get();
  }

  /** Batches and snapshots refused because their {@code mac} was missing or wrong. */
  long unauthenticatedCount() {
    return unauthenticated.get();
  }

  /** Reads that failed. */
  long unreachableCount() {
    return unreachable.get();
  }

  private <T> Optional<T> refuse(String what, String why) {
    refused.incrementAndGet();
    LOG.warn("refused {}: {}", what, why);
    return Optional.empty();
  }

  private <T> Optional<T> unauthenticated(String what, Map<String, Object> map) {
    unauthenticated.incrementAndGet();
    LOG.warn(
        "refused {}: its mac is {}; is kvbridge.handshake.secret the same everywhere?",
        what,
        map.containsKey(EventAuthenticator.FIELD) ? "wrong" : "missing");
    return Optional.empty();
  }

  private Map<String, Object> map(byte[] bytes) {
    @SuppressWarnings("unchecked")
    Map<String, Object> map = json.readValue(bytes, Map.class);
    return map;
  }
}
