package io.kvbridge.sample.broker;

import io.kvbridge.sample.SampleProperties;
import io.nats.client.Connection;
import io.nats.client.ConnectionListener;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.KeyValue;
import io.nats.client.KeyValueManagement;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.api.KeyValueConfiguration;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A connection to the NATS server KV events travel through, and the names they travel under:
 *
 * <ul>
 *   <li>batches: JetStream stream {@code stream}, subject {@code <subject>.<engine>}, message id
 *       {@code <engine>/<incarnation>/<seq>} (so a batch published twice is stored once), each the
 *       batch's JSON ({@code docs/events.md}, with its {@code mac} when a secret is set); the
 *       stream keeps each engine's last {@code kept-batches};
 *   <li>snapshots: key-value bucket {@code bucket}, key {@code <engine>}, the engine's latest
 *       snapshot's JSON; a deleted key is an engine that left;
 *   <li>requests for a fresh snapshot: core NATS subject {@code <subject>-resync.<engine>}.
 * </ul>
 *
 * <p>{@code <engine>} is the engine id's UTF-8 bytes in lowercase hexadecimal: any engine id is a
 * valid subject token and key. The connection reconnects by itself, without limit.
 *
 * <p>Thread-safe.
 */
public final class NatsEvents implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(NatsEvents.class);

  private final SampleProperties.Nats settings;
  private final Connection connection;
  private final List<Runnable> onReconnect;

  private NatsEvents(
      SampleProperties.Nats settings, Connection connection, List<Runnable> onReconnect) {
    this.settings = settings;
    this.connection = connection;
    this.onReconnect = onReconnect;
  }

  /**
   * Connects to the configured server as {@code clientName}, and creates the stream and the bucket
   * if they are missing.
   *
   * @throws IllegalStateException naming the server if it cannot be reached or refuses JetStream
   */
  public static NatsEvents connect(SampleProperties.Nats settings, String clientName) {
    if (!settings.enabled()) {
      throw new IllegalArgumentException("kvbridge.sample.events.nats.url is not set");
    }
    List<Runnable> onReconnect = new CopyOnWriteArrayList<>();
    Options options =
        new Options.Builder()
            .server(settings.url().toString())
            .connectionName(clientName)
            .connectionTimeout(settings.connectTimeout())
            .maxReconnects(-1)
            .reconnectWait(Duration.ofMillis(250))
            .connectionListener(
                (conn, event) -> {
                  LOG.info("NATS {}: {}", settings.url(), event.getEvent());
                  if (event == ConnectionListener.Events.RECONNECTED) {
                    // Off the client's thread: what runs may call the server.
                    Thread again =
                        new Thread(
                            () -> onReconnect.forEach(Runnable::run), "kv-events-nats-reconnected");
                    again.setDaemon(true);
                    again.start();
                  }
                })
            .build();
    Connection connection;
    try {
      connection = Nats.connect(options);
    } catch (IOException e) {
      throw new IllegalStateException(
          "cannot connect to the NATS server at "
              + settings.url()
              + " (kvbridge.sample.events.nats.url): "
              + e.getMessage(),
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while connecting to " + settings.url(), e);
    }
    NatsEvents events = new NatsEvents(settings, connection, onReconnect);
    try {
      events.ensureStreamAndBucket();
    } catch (IOException | JetStreamApiException | RuntimeException e) {
      events.close();
      throw new IllegalStateException(
          "the NATS server at "
              + settings.url()
              + " does not give JetStream stream "
              + settings.stream()
              + " and bucket "
              + settings.bucket()
              + " (is JetStream on, -js?): "
              + e.getMessage(),
          e);
    }
    return events;
  }

  private void ensureStreamAndBucket() throws IOException, JetStreamApiException {
    JetStreamManagement management = connection.jetStreamManagement();
    StreamConfiguration stream =
        StreamConfiguration.builder()
            .name(settings.stream())
            .subjects(settings.subject() + ".>")
            .maxMessagesPerSubject(settings.keptBatches())
            .storageType(StorageType.File)
            .build();
    if (!management.getStreamNames().contains(settings.stream())) {
      try {
        management.addStream(stream);
      } catch (JetStreamApiException e) {
        // Another node created it meanwhile; anything else shows at the next call.
        LOG.debug("stream {} not created: {}", settings.stream(), e.getMessage());
      }
    }
    KeyValueManagement buckets = connection.keyValueManagement();
    if (!buckets.getBucketNames().contains(settings.bucket())) {
      try {
        buckets.create(
            KeyValueConfiguration.builder()
                .name(settings.bucket())
                .maxHistoryPerKey(1)
                .storageType(StorageType.File)
                .build());
      } catch (JetStreamApiException e) {
        LOG.debug("bucket {} not created: {}", settings.bucket(), e.getMessage());
      }
    }
  }

  /**
   * Runs {@code action} each time the connection is back after the server was lost (it may have
   * restarted, without the consumers it had).
   */
  public void onReconnect(Runnable action) {
    onReconnect.add(action);
  }

  /** The settings. */
  public SampleProperties.Nats settings() {
    return settings;
  }

  /** The connection. */
  public Connection connection() {
    return connection;
  }

  /** JetStream on the connection. */
  public JetStream jetStream() {
    try {
      return connection.jetStream();
    } catch (IOException e) {
      throw new IllegalStateException("JetStream is not available on " + settings.url(), e);
    }
  }

  /** The snapshots' bucket. */
  public KeyValue snapshots() {
    try {
      return connection.keyValue(settings.bucket());
    } catch (IOException e) {
      throw new IllegalStateException(
          "bucket " + settings.bucket() + " is not available on " + settings.url(), e);
    }
  }

  /** The subject of {@code engineId}'s batches. */
  public String subject(String engineId) {
    return settings.subject() + "." + token(engineId);
  }

  /** The subject every engine's batches are under. */
  public String allSubjects() {
    return settings.subject() + ".>";
  }

  /** The subject on which {@code engineId} is asked for a fresh snapshot. */
  public String resyncSubject(String engineId) {
    return settings.subject() + "-resync." + token(engineId);
  }

  /** {@code engineId}'s key in the bucket. */
  public static String key(String engineId) {
    return token(engineId);
  }

  /** The engine id a key names; empty if the key is not one this class writes. */
  public static Optional<String> engineOfKey(String key) {
    try {
      return Optional.of(new String(HexFormat.of().parseHex(key), StandardCharsets.UTF_8))
          .filter(id -> token(id).equals(key));
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  /** The message id of a batch, which the stream stores once. */
  public static String messageId(String engineId, long incarnation, long sequence) {
    return token(engineId)
        + "/"
        + HexFormat.of().toHexDigits(incarnation)
        + "/"
        + Long.toString(sequence);
  }

  private static String token(String engineId) {
    return HexFormat.of().formatHex(engineId.getBytes(StandardCharsets.UTF_8));
  }

  @Override
  public void close() {
    try {
      connection.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
