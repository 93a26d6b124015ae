package io.kvbridge.discovery.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.Role;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * What the watch on the engines' keys means to this process: applies its events to the local {@link
 * EngineView}, tells the listeners of every change, and tells every local connector that deals with
 * a peer when that peer is gone ({@link KvConnector#peerGone}). A local engine's own key deleted is
 * not a peer gone: {@code ownKeyLost} has it registered again.
 *
 * <p>A peer is gone when etcd's history shows its key deleted: a delete event on the watch, or,
 * after a gap in the watch, a fresh listing of the same etcd cluster in which its key is missing or
 * was created anew (see {@code EngineView}). Then every local connector whose role deals with the
 * peer's (a consumer with producers, a producer with consumers) is told {@link
 * KvConnector#peerGone}: a consumer fails the loads still waiting on that producer, a producer
 * revokes the leases only that consumer was keeping alive. A local engine is never gone to this
 * process: if its own key is deleted (its lease expired while etcd could not be reached), it is
 * registered again.
 *
 * <p>Threads: confined to the discovery thread, but for the view and the listener list, which are
 * safe to read from any thread.
 */
final class PeerWatch {

  private static final System.Logger LOG = System.getLogger(EtcdDiscovery.class.getName());

  private final EtcdDiscoverySettings settings;
  private final ByteSequence enginesPrefix;
  private final EngineView view;
  private final Map<String, Registration> registrations;
  private final List<Consumer<Map<String, EngineRecord>>> listeners;
  private final Consumer<Registration> ownKeyLost;

  PeerWatch(
      EtcdDiscoverySettings settings,
      EngineView view,
      Map<String, Registration> registrations,
      List<Consumer<Map<String, EngineRecord>>> listeners,
      Consumer<Registration> ownKeyLost) {
    this.settings = settings;
    this.enginesPrefix = EtcdRequests.bytes(settings.enginesPrefix());
    this.view = view;
    this.registrations = registrations;
    this.listeners = listeners;
    this.ownKeyLost = ownKeyLost;
  }

  /** Applies one response of the watch: puts, deletes, and the peers gone with the deletes. */
  void apply(WatchResponse response) {
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
    tellAll();
  }

  /** Gives every listener the view as it is now. */
  void tellAll() {
    listeners.forEach(this::tell);
  }

  /** Gives {@code listener} the view as it is now, if it still listens. */
  void tell(Consumer<Map<String, EngineRecord>> listener) {
    if (!listeners.contains(listener)) {
      return;
    }
    try {
      listener.accept(Map.copyOf(view.records()));
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "a listener to the engines in etcd failed", e);
    }
  }

  /** Tells the local connectors that deal with them that {@code engineIds} are gone. */
  void gone(List<String> engineIds, Map<String, Role> roles, String why) {
    for (String engineId : engineIds) {
      Registration own = registrations.get(engineId);
      if (own != null) {
        // This process runs that engine: it is not gone, its key must come back.
        own.keyMissing = true;
        ownKeyLost.accept(own);
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

  /** The engine id a key under the engines' prefix names, if it is one. */
  Optional<String> engineIdOf(KeyValue kv) {
    if (!kv.getKey().startsWith(enginesPrefix)) {
      return Optional.empty();
    }
    String engineId = kv.getKey().substring(enginesPrefix.size()).toString(StandardCharsets.UTF_8);
    return engineId.isEmpty() ? Optional.empty() : Optional.of(engineId);
  }

  /** A key as the view keeps it: its record if it reads, and the revision it was created at. */
  EngineView.StoredKey stored(String engineId, KeyValue kv) {
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

  /** Whether a local engine in {@code local} role deals with a peer in {@code peer} role. */
  private static boolean dealsWith(Role local, Optional<Role> peer) {
    return peer.isEmpty()
        || (local.consumes() && peer.get().produces())
        || (local.produces() && peer.get().consumes());
  }
}
