package io.kvbridge.discovery.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchResponse;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * One connection to etcd: a fresh client, the listing of every engine's key it started with, and a
 * watch on the engines' keys from the revision right after that listing, so no change falls between
 * the two. A session ends when etcd cannot be reached; the next one starts afresh.
 *
 * <p>Threads: opened and closed on the discovery thread; the watch calls its {@link Events} on the
 * client's threads, which hand them to the discovery thread.
 */
final class EtcdSession {

  /**
   * How long connecting and the first listing may take: a new connection's set-up (and, in a
   * process that just started, loading the client) takes longer than a request on a live one.
   */
  static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);

  /** What the watch of session {@code id} reports. */
  interface Events {
    /** Changes to the engines' keys. */
    void changed(long id, WatchResponse response);

    /** The watch ended, with {@code error} or (null) by etcd's choice. */
    void ended(long id, Throwable error);
  }

  final long id;
  final Client client;
  final EngineView.Listing listing;
  private final Watch.Watcher watcher;

  private EtcdSession(long id, Client client, EngineView.Listing listing, Watch.Watcher watcher) {
    this.id = id;
    this.client = client;
    this.listing = listing;
    this.watcher = watcher;
  }

  /**
   * Connects, lists the engines' keys and starts watching them.
   *
   * @throws EtcdRequests.EtcdUnavailableException if etcd did not answer; nothing is left open
   */
  static EtcdSession open(long id, EtcdDiscoverySettings settings, PeerWatch peers, Events events) {
    ByteSequence prefix = EtcdRequests.bytes(settings.enginesPrefix());
    Client client =
        Client.builder()
            .endpoints(settings.endpoints().toArray(URI[]::new))
            .connectTimeout(CONNECT_TIMEOUT)
            // Fail at once while the connection is down: discovery retries on its own schedule.
            .waitForReady(false)
            .retryMaxAttempts(0)
            .build();
    try {
      GetResponse got =
          EtcdRequests.await(
              client.getKVClient().get(prefix, GetOption.builder().isPrefix(true).build()),
              settings.requestTimeout());
      List<EngineView.StoredKey> keys = new ArrayList<>();
      for (KeyValue kv : got.getKvs()) {
        peers.engineIdOf(kv).ifPresent(engineId -> keys.add(peers.stored(engineId, kv)));
      }
      Watch.Watcher watcher =
          client
              .getWatchClient()
              .watch(
                  prefix,
                  WatchOption.builder()
                      .isPrefix(true)
                      .withRevision(got.getHeader().getRevision() + 1)
                      .withRequireLeader(true)
                      .build(),
                  Watch.listener(
                      response -> events.changed(id, response),
                      error -> events.ended(id, error),
                      () -> events.ended(id, null)));
      return new EtcdSession(
          id,
          client,
          new EngineView.Listing(
              got.getHeader().getClusterId(), got.getHeader().getRevision(), keys),
          watcher);
    } catch (RuntimeException e) {
      client.close();
      throw e;
    }
  }

  /**
   * Whether any of etcd's endpoints accepts a TCP connection now: a cheap check, made while etcd is
   * unreachable, before a whole client is built to try again.
   */
  static boolean anEndpointAcceptsConnections(EtcdDiscoverySettings settings) {
    int timeout = (int) Math.max(1, settings.requestTimeout().toMillis() / 2);
    for (URI endpoint : settings.endpoints()) {
      try (Socket socket = new Socket()) {
        socket.connect(new InetSocketAddress(endpoint.getHost(), endpoint.getPort()), timeout);
        return true;
      } catch (IOException e) {
        // not this one
      }
    }
    return false;
  }

  /** Stops the watch, and closes the client a little later on {@code loop}. */
  void close(ScheduledExecutorService loop) {
    watcher.close();
    // The client's watch may be failing right now, and the client schedules its own retry after
    // telling discovery: it is closed once that retry found the watch closed, not under it.
    try {
      loop.schedule(client::close, 2, TimeUnit.SECONDS);
    } catch (RejectedExecutionException stopping) {
      client.close();
    }
  }
}
