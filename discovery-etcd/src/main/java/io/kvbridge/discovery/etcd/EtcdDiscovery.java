package io.kvbridge.discovery.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.PeerDirectory;
import io.kvbridge.spi.ProducerStatus;
import io.kvbridge.spi.Role;
import io.kvbridge.time.DurationText;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * Engines on etcd: registers each local engine's connector under {@code <prefix>/engines/<engine
 * id>}, bound to an etcd lease kept alive while the engine runs; answers {@link
 * #handshakeAddress(String)} (the connectors' {@link PeerDirectory}) from a local view of every
 * engine's key that a watch keeps current; and tells every local connector when a peer is gone.
 *
 * <h2>Registration</h2>
 *
 * {@link #register} wraps an engine's connector; the engine is registered as soon as its KV cache
 * is (from then on it answers handshakes and its layout is known) with an {@link EngineRecord}
 * bound to a lease of {@link EtcdDiscoverySettings#ttl()}. The lease is renewed every {@link
 * EtcdDiscoverySettings#tick()}, the record is written again when its load figures changed (at most
 * once per refresh interval), and the key is removed (its lease revoked) when the connector closes.
 * A process that dies stops renewing: its key expires after the time to live.
 *
 * <h2>When a peer is gone</h2>
 *
 * A peer is gone when etcd's history shows its key deleted: a delete event on the watch, or, after
 * a gap in the watch, a fresh listing of the same etcd cluster in which its key is missing or was
 * created anew (see {@code EngineView}). Then every local connector whose role deals with the
 * peer's (a consumer with producers, a producer with consumers) is told {@link
 * KvConnector#peerGone}: a consumer fails the loads still waiting on that producer, a producer
 * revokes the leases only that consumer was keeping alive. A local engine is never gone to this
 * process: if its own key is deleted (its lease expired while etcd could not be reached), it is
 * registered again.
 *
 * <h2>When etcd is unreachable</h2>
 *
 * Engines keep serving with the view they have: the directory still answers, and nothing is freed.
 * Losing the connection, a failed or timed-out request, a watch error or a compaction is never read
 * as a peer being gone; only a deletion that etcd's history shows is, once it can be read again.
 * The outage is logged once when it starts and once when it ends; meanwhile this process only
 * checks, once per tick, whether an endpoint accepts connections, and then reconnects with a fresh
 * client (a fresh listing, a fresh watch), renews the leases that survived and registers again the
 * engines whose lease expired. etcd itself extends every lease by its time to live when it comes
 * back, so a peer that reconnects within that time is never seen gone.
 *
 * <p>Threads: every call may come from any thread. One daemon thread ({@code kvbridge-etcd}) talks
 * to etcd, applies the watch's events and calls {@link KvConnector#peerGone}; {@link
 * #handshakeAddress} and {@link #engines()} read the view without waiting on it or on the network.
 */
public final class EtcdDiscovery implements PeerDirectory, AutoCloseable {

  private static final System.Logger LOG = System.getLogger(EtcdDiscovery.class.getName());

  /**
   * How long connecting and the first listing may take: a new connection's set-up (and, in a
   * process that just started, loading the client) takes longer than a request on a live one.
   */
  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);

  private final EtcdDiscoverySettings settings;
  private final ByteSequence enginesPrefix;
  private final ScheduledExecutorService loop;
  private final EngineView view = new EngineView();
  private final Map<String, Registration> registrations = new ConcurrentHashMap<>();
  private final List<Consumer<Map<String, EngineRecord>>> listeners = new CopyOnWriteArrayList<>();
  private volatile Thread loopThread;
  private volatile DiscoveryStatus status;
  private volatile boolean closed;

  // Confined to the discovery thread.
  private Session session;
  private Outage outage;
  private long sessionIds;

  private EtcdDiscovery(EtcdDiscoverySettings settings) {
    this.settings = settings;
    this.enginesPrefix = bytes(settings.enginesPrefix());
    this.loop =
        Executors.newSingleThreadScheduledExecutor(
            task -> {
              Thread thread = new Thread(task, "kvbridge-etcd");
              thread.setDaemon(true);
              loopThread = thread;
              return thread;
            });
    this.status =
        new DiscoveryStatus(
            settings.endpoints(), false, Optional.of("not connected to etcd yet"), Map.of(), 0);
  }

  /**
   * Starts discovery on etcd: connects in the background, and keeps trying while etcd is
   * unreachable (an engine may start before etcd does).
   */
  public static EtcdDiscovery start(EtcdDiscoverySettings settings) {
    EtcdDiscovery discovery = new EtcdDiscovery(settings);
    long tick = settings.tick().toNanos();
    discovery.loop.scheduleWithFixedDelay(discovery::tick, 0, tick, TimeUnit.NANOSECONDS);
    return discovery;
  }

  /** The settings this discovery runs with. */
  public EtcdDiscoverySettings settings() {
    return settings;
  }

  /**
   * Registers {@code connector}'s engine, and tells it from now on when a peer is gone. Call it
   * before the engine registers its KV cache; use the connector returned from then on: it is
   * registered once its KV cache is, and deregistered when it closes.
   *
   * @param load how many blocks the engine has free ({@link EngineLoad#UNKNOWN} if it does not say)
   * @throws IllegalStateException if an engine of that id is already registered here, the engine
   *     already answers handshakes, or this discovery is closed
   */
  public KvConnector register(KvConnector connector, EngineLoad load) {
    return register(connector, load, EngineAttributes.NONE);
  }

  /**
   * Registers {@code connector}'s engine as {@link #register(KvConnector, EngineLoad)} does, its
   * registration carrying what {@code attributes} says about it.
   */
  public KvConnector register(KvConnector connector, EngineLoad load, EngineAttributes attributes) {
    if (closed) {
      throw new IllegalStateException("etcd discovery is closed");
    }
    String engineId = connector.settings().engineId();
    if (connector.status().producer().flatMap(ProducerStatus::handshakeAddress).isPresent()) {
      throw new IllegalStateException(
          "engine "
              + engineId
              + " registered its KV cache already; register its connector with discovery first,"
              + " so its registration can name the cache's layout");
    }
    Registration registration =
        new Registration(connector, settings.engineKey(engineId), load, attributes);
    if (registrations.putIfAbsent(engineId, registration) != null) {
      throw new IllegalStateException(
          "engine id '"
              + engineId
              + "' is registered in etcd by this process already; engine ids must be unique");
    }
    post(this::publishStatus);
    return new RegisteredConnector(connector, registration, this);
  }

  /** The handshake address of live producer {@code engineId}, as its registration says. */
  @Override
  public Optional<String> handshakeAddress(String engineId) {
    return view.find(engineId)
        .flatMap(EngineView.StoredKey::record)
        .filter(r -> r.role().produces())
        .flatMap(EngineRecord::handshakeAddress);
  }

  /** Every engine registered in etcd, as last seen, by engine id. */
  public Map<String, EngineRecord> engines() {
    return view.records();
  }

  /**
   * Calls {@code listener} with every engine registered in etcd ({@link #engines()}) now, and again
   * after every change this process learns of: a key put or deleted, or a fresh listing after a gap
   * in the watch. While etcd is unreachable the last view stands and nothing is called. Closing the
   * returned handle stops the calls.
   *
   * <p>The listener is called on the discovery thread, one call at a time, and must return at once;
   * an exception it throws is logged.
   */
  public AutoCloseable onEnginesChanged(Consumer<Map<String, EngineRecord>> listener) {
    listeners.add(listener);
    post(() -> tell(listener));
    return () -> listeners.remove(listener);
  }

  /** Where discovery stands now. */
  public DiscoveryStatus status() {
    return status;
  }

  /**
   * Removes every local engine's registration (peers learn at once that they are going) and stops.
   * The connectors stay open; each closes on its own.
   */
  @Override
  public void close() {
    stop(true);
  }

  /**
   * Stops without removing anything from etcd, as a process that dies: the registrations expire
   * after their time to live. For tests of what peers see then.
   */
  void halt() {
    stop(false);
  }

  private void stop(boolean deregister) {
    if (closed) {
      return;
    }
    closed = true;
    Runnable stopping =
        () -> {
          if (deregister) {
            List.copyOf(registrations.values()).forEach(this::deregisterNow);
          }
          registrations.clear();
          endSession();
        };
    if (Thread.currentThread() == loopThread) {
      stopping.run();
      loop.shutdown();
      return;
    }
    Future<?> done = loop.submit(stopping);
    try {
      done.get(patience(registrations.size()).toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      LOG.log(Level.WARNING, "stopping etcd discovery did not finish cleanly: {0}", describe(e));
    } finally {
      loop.shutdownNow();
    }
  }

  // ------------------------------------------------------------ from the registered connectors

  void kvCacheRegistered(Registration registration, KvLayout layout) {
    registration.kvCacheRegistered(layout);
    post(
        () -> {
          if (session != null && registrations.get(registration.engineId) == registration) {
            refreshOrLose(registration);
          }
          publishStatus();
        });
  }

  /** Removes {@code registration}'s key (revokes its lease), waiting at most a request timeout. */
  void deregister(Registration registration) {
    if (closed || !registrations.remove(registration.engineId, registration)) {
      return;
    }
    if (Thread.currentThread() == loopThread) {
      deregisterNow(registration);
      return;
    }
    try {
      loop.submit(() -> deregisterNow(registration))
          .get(patience(1).toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException | RejectedExecutionException e) {
      LOG.log(
          Level.WARNING,
          "engine {0}''s registration in etcd was not removed ({1}); it expires within {2}",
          registration.engineId,
          describe(e),
          DurationText.of(settings.ttl()));
    }
  }

  // ------------------------------------------------------------ the discovery thread

  private void tick() {
    try {
      if (closed) {
        return;
      }
      if (session == null) {
        if (outage != null && !anEndpointAcceptsConnections()) {
          return;
        }
        connect();
      }
      for (Registration registration : registrations.values()) {
        if (session == null || !refreshOrLose(registration)) {
          break;
        }
      }
      publishStatus();
    } catch (RuntimeException e) {
      // Never let the schedule die: the next tick tries again.
      LOG.log(Level.ERROR, "etcd discovery failed unexpectedly; trying again next tick", e);
    }
  }

  private void connect() {
    Client client =
        Client.builder()
            .endpoints(settings.endpoints().toArray(URI[]::new))
            .connectTimeout(CONNECT_TIMEOUT)
            // Fail at once while the connection is down: this loop retries on its own schedule.
            .waitForReady(false)
            .retryMaxAttempts(0)
            .build();
    long id = ++sessionIds;
    try {
      GetResponse got =
          await(
              client.getKVClient().get(enginesPrefix, GetOption.builder().isPrefix(true).build()));
      List<EngineView.StoredKey> keys = new ArrayList<>();
      for (KeyValue kv : got.getKvs()) {
        engineIdOf(kv).ifPresent(engineId -> keys.add(stored(engineId, kv)));
      }
      Watch.Watcher watcher =
          client
              .getWatchClient()
              .watch(
                  enginesPrefix,
                  WatchOption.builder()
                      .isPrefix(true)
                      .withRevision(got.getHeader().getRevision() + 1)
                      .withRequireLeader(true)
                      .build(),
                  Watch.listener(
                      response -> post(() -> onEvents(id, response)),
                      error -> post(() -> onWatchEnded(id, error)),
                      () -> post(() -> onWatchEnded(id, null))));
      session = new Session(id, client, watcher);
      List<String> deleted =
          view.replace(
              new EngineView.Listing(
                  got.getHeader().getClusterId(), got.getHeader().getRevision(), keys));
      for (Registration registration : registrations.values()) {
        registration.keyMissing = !ownKeyPresent(registration);
      }
      if (outage != null) {
        LOG.log(
            Level.INFO,
            "etcd at {0} is reachable again after {1}; engines registered there: {2}",
            endpoints(),
            elapsedSince(outage.sinceNanos),
            view.size());
        outage = null;
      } else {
        LOG.log(
            Level.INFO,
            "connected to etcd at {0}; engines registered under {2}: {1}",
            endpoints(),
            view.size(),
            settings.enginesPrefix());
      }
      gone(
          deleted,
          "its etcd registration was deleted while this engine could not follow etcd (its lease"
              + " expired or it shut down)");
      listeners.forEach(this::tell);
    } catch (EtcdUnavailableException e) {
      client.close();
      lost(e.getCause());
    } catch (RuntimeException e) {
      client.close();
      lost(e);
    }
  }

  /**
   * Renews {@code registration}'s lease and writes its record when due; registers it again when its
   * lease expired. Returns false (having ended the session) when etcd did not answer.
   */
  private boolean refreshOrLose(Registration registration) {
    try {
      refresh(registration);
      return true;
    } catch (EtcdUnavailableException e) {
      lost(e.getCause());
      return false;
    }
  }

  private void refresh(Registration r) {
    if (!r.ready()) {
      return;
    }
    Client client = session.client;
    if (r.leaseId != 0) {
      try {
        await(client.getLeaseClient().keepAliveOnce(r.leaseId));
      } catch (EtcdUnavailableException e) {
        if (!(e.getCause() instanceof EtcdException ee
            && ee.getErrorCode() == ErrorCode.NOT_FOUND)) {
          throw e;
        }
        LOG.log(
            Level.INFO, "the etcd lease of engine {0} expired; registering it again", r.engineId);
        r.leaseId = 0;
        r.registered = false;
      }
    }
    boolean fresh = r.leaseId == 0;
    if (fresh) {
      r.leaseId = await(client.getLeaseClient().grant(settings.ttl().getSeconds())).getID();
    }
    EngineRecord record = r.record();
    long now = System.nanoTime();
    boolean due =
        !record.equals(r.published) && now - r.publishedAt >= settings.refreshInterval().toNanos();
    if (fresh || r.keyMissing || due) {
      await(
          client
              .getKVClient()
              .put(
                  bytes(r.key),
                  ByteSequence.from(record.toJson()),
                  PutOption.builder().withLeaseId(r.leaseId).build()));
      r.published = record;
      r.publishedAt = now;
      r.keyMissing = false;
      if (fresh) {
        LOG.log(
            Level.INFO,
            "engine {0} registered in etcd at {1} (lease {2}, time to live {3})",
            r.engineId,
            r.key,
            Long.toHexString(r.leaseId),
            DurationText.of(settings.ttl()));
      }
    }
    r.registered = true;
  }

  private void deregisterNow(Registration r) {
    r.registered = false;
    if (r.leaseId == 0 || session == null) {
      return;
    }
    long leaseId = r.leaseId;
    r.leaseId = 0;
    try {
      // Revoking the lease deletes the key with it: peers see this engine go at once.
      await(session.client.getLeaseClient().revoke(leaseId));
      LOG.log(Level.INFO, "engine {0} removed its registration from etcd", r.engineId);
    } catch (EtcdUnavailableException e) {
      LOG.log(
          Level.WARNING,
          "engine {0}''s registration in etcd was not removed ({1}); it expires within {2}",
          r.engineId,
          describe(e.getCause()),
          DurationText.of(settings.ttl()));
    }
    post(this::publishStatus);
  }

  private void onEvents(long sessionId, WatchResponse response) {
    if (session == null || session.id != sessionId) {
      return; // from a session that ended
    }
    List<String> deleted = new ArrayList<>();
    Map<String, Role> roles = new LinkedHashMap<>();
    for (WatchEvent event : response.getEvents()) {
      KeyValue kv = event.getKeyValue();
      Optional<String> engineId = engineIdOf(kv);
      if (engineId.isEmpty()) {
        continue;
      }
      switch (event.getEventType()) {
        case PUT -> {
          EngineView.StoredKey key = stored(engineId.get(), kv);
          view.put(key, kv.getModRevision());
          Registration own = registrations.get(engineId.get());
          if (own != null) {
            noteOtherWriter(own, key);
          }
        }
        case DELETE -> {
          Optional<EngineView.StoredKey> was = view.delete(engineId.get(), kv.getModRevision());
          deleted.add(engineId.get());
          was.flatMap(EngineView.StoredKey::record)
              .ifPresent(r -> roles.put(engineId.get(), r.role()));
        }
        default -> {
          // An event type this client does not know: nothing to apply.
        }
      }
    }
    gone(deleted, roles, "its etcd registration was deleted (its lease expired or it shut down)");
    listeners.forEach(this::tell);
    publishStatus();
  }

  /** Gives {@code listener} the view as it is now; on the discovery thread. */
  private void tell(Consumer<Map<String, EngineRecord>> listener) {
    if (!listeners.contains(listener)) {
      return;
    }
    try {
      listener.accept(Map.copyOf(view.records()));
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "a listener to the engines in etcd failed", e);
    }
  }

  /**
   * Warns, once per incarnation, that another process writes this engine's key: two processes run
   * under one engine id, and their peers cannot tell them apart.
   */
  private void noteOtherWriter(Registration own, EngineView.StoredKey key) {
    long ours = own.connector.settings().incarnation();
    key.record()
        .map(EngineRecord::incarnation)
        .filter(theirs -> theirs != ours && theirs != own.otherWriter)
        .ifPresent(
            theirs -> {
              own.otherWriter = theirs;
              LOG.log(
                  Level.WARNING,
                  "engine id {0} is registered in etcd by another process too (incarnation {1},"
                      + " this one is {2}); engine ids must be unique in the deployment",
                  own.engineId,
                  Long.toHexString(theirs),
                  Long.toHexString(ours));
            });
  }

  private void onWatchEnded(long sessionId, Throwable error) {
    if (session == null || session.id != sessionId) {
      return; // a watch this process closed
    }
    lost(error == null ? new IllegalStateException("etcd ended the watch") : error);
  }

  private void gone(List<String> engineIds, String why) {
    gone(engineIds, Map.of(), why);
  }

  /** Tells the local connectors that deal with them that {@code engineIds} are gone. */
  private void gone(List<String> engineIds, Map<String, Role> roles, String why) {
    for (String engineId : engineIds) {
      Registration own = registrations.get(engineId);
      if (own != null) {
        // This process runs that engine: it is not gone, its key must come back.
        own.keyMissing = true;
        if (session != null) {
          refreshOrLose(own);
        }
        continue;
      }
      Optional<Role> role = Optional.ofNullable(roles.get(engineId));
      String reason = why + ", key " + settings.engineKey(engineId);
      List<Registration> told = new ArrayList<>();
      for (Registration local : registrations.values()) {
        if (dealsWith(local.connector.settings().role(), role)) {
          try {
            local.connector.peerGone(engineId, reason);
            told.add(local);
          } catch (RuntimeException e) {
            LOG.log(
                Level.WARNING,
                "engine " + local.engineId + " could not be told that " + engineId + " is gone",
                e);
          }
        }
      }
      LOG.log(
          Level.INFO,
          "engine {0} is gone: {1}; told {2}",
          engineId,
          reason,
          told.isEmpty()
              ? "no local engine"
              : told.stream().map(r -> r.engineId).collect(Collectors.joining(", ")));
    }
  }

  /** Whether a local engine in {@code local} role deals with a peer in {@code peer} role. */
  private static boolean dealsWith(Role local, Optional<Role> peer) {
    return peer.isEmpty()
        || (local.consumes() && peer.get().produces())
        || (local.produces() && peer.get().consumes());
  }

  private void lost(Throwable cause) {
    endSession();
    registrations.values().forEach(r -> r.registered = false);
    if (outage == null) {
      outage = new Outage(System.nanoTime(), describe(cause));
      LOG.log(
          Level.WARNING,
          "etcd at {0} is unreachable ({1}); engines keep serving with the {2} engines they know,"
              + " none is taken for gone until etcd can be read again, and registrations are"
              + " renewed then",
          endpoints(),
          outage.cause,
          view.size());
    }
    publishStatus();
  }

  private void endSession() {
    Session s = session;
    session = null;
    if (s == null) {
      return;
    }
    s.watcher.close();
    // The client's watch may be failing right now, and the client schedules its own retry after
    // telling this process: it is closed once that retry found the watch closed, not under it.
    try {
      loop.schedule(s.client::close, 2, TimeUnit.SECONDS);
    } catch (RejectedExecutionException stopping) {
      s.client.close();
    }
  }

  private void publishStatus() {
    Map<String, DiscoveryStatus.RegistrationState> states = new LinkedHashMap<>();
    Optional<String> problem = Optional.empty();
    if (session == null) {
      problem =
          Optional.of(
              outage == null
                  ? "not connected to etcd at " + endpoints() + " yet"
                  : "etcd at "
                      + endpoints()
                      + " is unreachable ("
                      + outage.cause
                      + ") since "
                      + elapsedSince(outage.sinceNanos)
                      + " ago");
    }
    for (Registration r : registrations.values()) {
      DiscoveryStatus.RegistrationState state =
          !r.ready()
              ? DiscoveryStatus.RegistrationState.WAITING_FOR_KV_CACHE
              : r.registered
                  ? DiscoveryStatus.RegistrationState.REGISTERED
                  : DiscoveryStatus.RegistrationState.NOT_REGISTERED;
      states.put(r.engineId, state);
      if (problem.isEmpty() && state == DiscoveryStatus.RegistrationState.NOT_REGISTERED) {
        problem = Optional.of("engine " + r.engineId + " is not registered in etcd yet");
      }
    }
    status =
        new DiscoveryStatus(settings.endpoints(), session != null, problem, states, view.size());
  }

  // ------------------------------------------------------------ helpers

  private boolean ownKeyPresent(Registration r) {
    return view.find(r.engineId)
        .flatMap(EngineView.StoredKey::record)
        .filter(record -> record.incarnation() == r.connector.settings().incarnation())
        .isPresent();
  }

  private boolean anEndpointAcceptsConnections() {
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

  private Optional<String> engineIdOf(KeyValue kv) {
    if (!kv.getKey().startsWith(enginesPrefix)) {
      return Optional.empty();
    }
    String engineId = kv.getKey().substring(enginesPrefix.size()).toString(StandardCharsets.UTF_8);
    return engineId.isEmpty() ? Optional.empty() : Optional.of(engineId);
  }

  private EngineView.StoredKey stored(String engineId, KeyValue kv) {
    Optional<EngineRecord> record;
    try {
      record = Optional.of(EngineRecord.fromJson(engineId, kv.getValue().getBytes()));
    } catch (MalformedEngineRecordException e) {
      LOG.log(
          Level.WARNING,
          "the registration of engine {0} in etcd is not readable ({1}); its address is not used",
          engineId,
          e.getMessage());
      record = Optional.empty();
    }
    return new EngineView.StoredKey(engineId, record, kv.getCreateRevision());
  }

  private <T> T await(CompletableFuture<T> future) {
    return await(future, settings.requestTimeout());
  }

  private static <T> T await(CompletableFuture<T> future, Duration timeout) {
    try {
      return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new EtcdUnavailableException(e);
    } catch (ExecutionException e) {
      throw new EtcdUnavailableException(e.getCause());
    } catch (TimeoutException e) {
      future.cancel(true);
      throw new EtcdUnavailableException(
          new TimeoutException("no answer within " + DurationText.of(timeout)));
    }
  }

  /** Runs {@code task} on the discovery thread; a failure is logged, never lost. */
  private void post(Runnable task) {
    try {
      loop.execute(
          () -> {
            try {
              task.run();
            } catch (RuntimeException e) {
              LOG.log(Level.ERROR, "etcd discovery failed unexpectedly", e);
            }
          });
    } catch (RejectedExecutionException e) {
      // Stopped: nothing is applied any more.
    }
  }

  /**
   * How long a caller waits for the discovery thread to remove {@code registrations} keys: the
   * thread may be connecting, then each removal is one request.
   */
  private Duration patience(int registrations) {
    return CONNECT_TIMEOUT.plus(settings.requestTimeout().multipliedBy(registrations + 1L));
  }

  /** The time since {@code nanos}, in whole seconds (whole milliseconds under a second). */
  private static String elapsedSince(long nanos) {
    Duration elapsed = Duration.ofNanos(System.nanoTime() - nanos);
    return DurationText.of(
        elapsed.toSeconds() >= 1
            ? Duration.ofSeconds(elapsed.toSeconds())
            : Duration.ofMillis(elapsed.toMillis()));
  }

  private String endpoints() {
    return settings.endpoints().stream().map(URI::toString).collect(Collectors.joining(","));
  }

  private static ByteSequence bytes(String text) {
    return ByteSequence.from(text, StandardCharsets.UTF_8);
  }

  private static String describe(Throwable e) {
    Throwable cause = e;
    while ((cause instanceof ExecutionException || cause instanceof EtcdUnavailableException)
        && cause.getCause() != null) {
      cause = cause.getCause();
    }
    String message = cause.getMessage();
    return message == null || message.isBlank() ? cause.getClass().getSimpleName() : message;
  }

  /** A connection to etcd: its client and the watch on the engines' keys. */
  private record Session(long id, Client client, Watch.Watcher watcher) {}

  /** etcd could not be reached since {@code sinceNanos}, first because of {@code cause}. */
  private record Outage(long sinceNanos, String cause) {}

  /** A request to etcd failed or was not answered in time; the cause says how. */
  private static final class EtcdUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    EtcdUnavailableException(Throwable cause) {
      super(cause);
    }
  }
}
