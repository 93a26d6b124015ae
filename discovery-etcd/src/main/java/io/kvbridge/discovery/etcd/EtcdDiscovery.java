package io.kvbridge.discovery.etcd;

import io.etcd.jetcd.watch.WatchResponse;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.spi.ConnectorListener;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.PeerDirectory;
import io.kvbridge.spi.ProducerStatus;
import io.kvbridge.time.DurationText;
import java.lang.System.Logger.Level;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
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
 * {@link #register} listens to an engine's connector: the engine is registered once its KV cache is
 * (from then on it answers handshakes and its layout is known), under a lease of {@link
 * EtcdDiscoverySettings#ttl()} renewed every {@link EtcdDiscoverySettings#tick()} ({@link
 * Registrar} says how its key is kept), and removed when the connector closes. A process that dies
 * stops renewing: its key expires after the time to live.
 *
 * <h2>When a peer is gone</h2>
 *
 * When etcd's history shows its key deleted, every local connector that deals with it is told
 * {@link KvConnector#peerGone} ({@link PeerWatch} says exactly when); a local engine is never gone
 * to this process.
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

  private final EtcdDiscoverySettings settings;
  private final ScheduledExecutorService loop;
  private final EngineView view = new EngineView();
  private final Map<String, Registration> registrations = new ConcurrentHashMap<>();
  private final List<Consumer<Map<String, EngineRecord>>> listeners = new CopyOnWriteArrayList<>();
  private final PeerWatch watch;
  private final Registrar registrar;
  private volatile Thread loopThread;
  private volatile DiscoveryStatus status;
  private volatile boolean closed;

  // Confined to the discovery thread.
  private EtcdSession session;
  private Outage outage;
  private long sessionIds;

  private EtcdDiscovery(EtcdDiscoverySettings settings) {
    this.settings = settings;
    this.registrar = new Registrar(settings);
    this.watch =
        new PeerWatch(
            settings,
            view,
            registrations,
            listeners,
            own -> {
              if (session != null) {
                refreshOrLose(own);
              }
            });
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
   * before the engine registers its KV cache: the engine is registered once its KV cache is, and
   * deregistered when its connector closes (it listens to the connector's lifecycle).
   *
   * @return {@code connector} itself
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
    connector.listen(
        new ConnectorListener() {
          @Override
          public void kvCacheRegistered(int rank, KvLayout layout) {
            registration.kvCacheRegistered(layout);
            post(
                () -> {
                  if (session != null && registrations.get(registration.engineId) == registration) {
                    refreshOrLose(registration);
                  }
                  publishStatus();
                });
          }

          @Override
          public void closing() {
            // Peers learn at once that this engine is going; then the connector closes.
            deregister(registration);
          }
        });
    post(this::publishStatus);
    return connector;
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
    post(() -> watch.tell(listener));
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
    awaitOnLoop(
        stopping,
        patience(registrations.size()),
        why -> LOG.log(Level.WARNING, "stopping etcd discovery did not finish cleanly: {0}", why));
    loop.shutdownNow();
  }

  /** Runs {@code task} on the discovery thread and waits for it at most {@code patience}. */
  private void awaitOnLoop(Runnable task, Duration patience, Consumer<String> failed) {
    try {
      loop.submit(task).get(patience.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException | RejectedExecutionException e) {
      failed.accept(EtcdRequests.describe(e));
    }
  }

  // ------------------------------------------------------------ from the registered connectors
  /** Removes {@code registration}'s key (revokes its lease), waiting at most a request timeout. */
  void deregister(Registration registration) {
    if (closed || !registrations.remove(registration.engineId, registration)) {
      return;
    }
    if (Thread.currentThread() == loopThread) {
      deregisterNow(registration);
      return;
    }
    awaitOnLoop(
        () -> deregisterNow(registration),
        patience(1),
        why ->
            LOG.log(
                Level.WARNING,
                "engine {0}''s registration in etcd was not removed ({1}); it expires within {2}",
                registration.engineId,
                why,
                DurationText.of(settings.ttl())));
  }

  // ------------------------------------------------------------ the discovery thread

  private void tick() {
    try {
      if (closed) {
        return;
      }
      if (session == null) {
        if (outage != null && !EtcdSession.anEndpointAcceptsConnections(settings)) {
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
    EtcdSession opened;
    try {
      opened =
          EtcdSession.open(
              ++sessionIds,
              settings,
              watch,
              new EtcdSession.Events() {
                @Override
                public void changed(long id, WatchResponse response) {
                  post(() -> onEvents(id, response));
                }

                @Override
                public void ended(long id, Throwable error) {
                  post(() -> onWatchEnded(id, error));
                }
              });
    } catch (EtcdRequests.EtcdUnavailableException e) {
      lost(e.getCause());
      return;
    } catch (RuntimeException e) {
      lost(e);
      return;
    }
    session = opened;
    List<String> deleted = view.replace(opened.listing);
    for (Registration registration : registrations.values()) {
      registration.keyMissing = !ownKeyPresent(registration);
    }
    if (outage != null) {
      LOG.log(
          Level.INFO,
          "etcd at {0} is reachable again after {1}; engines registered there: {2}",
          endpoints(),
          EtcdRequests.elapsedSince(outage.sinceNanos),
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
    watch.gone(
        deleted,
        Map.of(),
        "its etcd registration was deleted while this engine could not follow etcd (its lease"
            + " expired or it shut down)");
    watch.tellAll();
  }

  /**
   * Renews {@code registration}'s lease and writes its record when due; registers it again when its
   * lease expired. Returns false (having ended the session) when etcd did not answer.
   */
  private boolean refreshOrLose(Registration registration) {
    try {
      registrar.refresh(session.client, registration);
      return true;
    } catch (EtcdRequests.EtcdUnavailableException e) {
      lost(e.getCause());
      return false;
    }
  }

  private void deregisterNow(Registration r) {
    registrar.deregister(session == null ? null : session.client, r);
    post(this::publishStatus);
  }

  private void onEvents(long sessionId, WatchResponse response) {
    if (session == null || session.id != sessionId) {
      return; // from a session that ended
    }
    watch.apply(response);
    publishStatus();
  }

  private void onWatchEnded(long sessionId, Throwable error) {
    if (session == null || session.id != sessionId) {
      return; // a watch this process closed
    }
    lost(error == null ? new IllegalStateException("etcd ended the watch") : error);
  }

  private void lost(Throwable cause) {
    endSession();
    registrations.values().forEach(r -> r.registered = false);
    if (outage == null) {
      outage = new Outage(System.nanoTime(), EtcdRequests.describe(cause));
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
    EtcdSession s = session;
    session = null;
    if (s != null) {
      s.close(loop);
    }
  }

  private void publishStatus() {
    Optional<String> unreachable = Optional.empty();
    if (session == null) {
      unreachable =
          Optional.of(
              outage == null
                  ? "not connected to etcd at " + endpoints() + " yet"
                  : "etcd at "
                      + endpoints()
                      + " is unreachable ("
                      + outage.cause
                      + ") since "
                      + EtcdRequests.elapsedSince(outage.sinceNanos)
                      + " ago");
    }
    status =
        DiscoveryStatus.of(settings.endpoints(), unreachable, registrations.values(), view.size());
  }

  // ------------------------------------------------------------ helpers

  private boolean ownKeyPresent(Registration r) {
    return view.find(r.engineId)
        .flatMap(EngineView.StoredKey::record)
        .filter(record -> record.incarnation() == r.connector.settings().incarnation())
        .isPresent();
  }

  private <T> T await(CompletableFuture<T> future) {
    return EtcdRequests.await(future, settings.requestTimeout());
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
    return EtcdSession.CONNECT_TIMEOUT.plus(
        settings.requestTimeout().multipliedBy(registrations + 1L));
  }

  private String endpoints() {
    return settings.endpoints().stream().map(URI::toString).collect(Collectors.joining(","));
  }

  /** etcd could not be reached since {@code sinceNanos}, first because of {@code cause}. */
  private record Outage(long sinceNanos, String cause) {}
}
