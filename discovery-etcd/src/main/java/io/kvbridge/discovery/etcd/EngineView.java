package io.kvbridge.discovery.etcd;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * This process's view of the engine keys in etcd, and the rule by which a peer is taken for gone.
 *
 * <p>A peer is gone when etcd's history shows its key deleted: a delete event on the watch ({@link
 * #delete}), or, when the watch had a gap (the connection was lost, or etcd compacted the history
 * the watch needed), a fresh listing of the same etcd cluster, no older than what this view has
 * seen, in which the key is absent or was created anew ({@link #replace}). Both mean the same
 * thing: the key's lease expired or its engine removed it. Nothing else does: an error, a timeout,
 * a lost connection or a listing of another cluster (etcd's data was lost or restored, so its
 * listing proves nothing about what happened to a key) never makes a peer gone.
 *
 * <p>Threads: {@link #replace}, {@link #put} and {@link #delete} are called on the discovery thread
 * only; the readers ({@link #find}, {@link #records}, {@link #size}) may be called from any thread
 * and see each key as last written.
 */
final class EngineView {

  /**
   * One engine's key as etcd holds it.
   *
   * @param engineId the last segment of the key
   * @param record its value, if it is a well-formed {@link EngineRecord}
   * @param createRevision the revision that created the key; a key deleted and created again has a
   *     newer one
   */
  record StoredKey(String engineId, Optional<EngineRecord> record, long createRevision) {}

  /**
   * Every engine key, read at one revision.
   *
   * @param clusterId the etcd cluster that answered
   * @param revision the store's revision the listing was read at
   * @param keys the engine keys
   */
  record Listing(long clusterId, long revision, List<StoredKey> keys) {}

  private final Map<String, StoredKey> keys = new ConcurrentHashMap<>();
  private long clusterId;
  private long revision;
  private boolean seeded;

  /** Engine {@code engineId}'s key, if this view holds it. */
  Optional<StoredKey> find(String engineId) {
    return Optional.ofNullable(keys.get(engineId));
  }

  /** The well-formed records in this view, by engine id. */
  Map<String, EngineRecord> records() {
    Map<String, EngineRecord> records = new LinkedHashMap<>();
    keys.values().forEach(k -> k.record().ifPresent(r -> records.put(k.engineId(), r)));
    return records;
  }

  /** How many engine keys this view holds. */
  int size() {
    return keys.size();
  }

  /**
   * Replaces this view with {@code listing}; returns the engines whose keys the listing proves
   * deleted since this view saw them (none on the first listing, or when the listing comes from
   * another cluster or an older revision).
   */
  List<String> replace(Listing listing) {
    boolean sameHistory =
        seeded && listing.clusterId() == clusterId && listing.revision() >= revision;
    Map<String, StoredKey> listed = new LinkedHashMap<>();
    listing.keys().forEach(k -> listed.put(k.engineId(), k));
    List<String> deleted = new ArrayList<>();
    if (sameHistory) {
      for (StoredKey known : keys.values()) {
        StoredKey now = listed.get(known.engineId());
        if (now == null || now.createRevision() != known.createRevision()) {
          deleted.add(known.engineId());
        }
      }
    }
    keys.keySet().retainAll(listed.keySet());
    keys.putAll(listed);
    clusterId = listing.clusterId();
    revision = listing.revision();
    seeded = true;
    return deleted;
  }

  /** A put of {@code key} observed at {@code atRevision}. */
  void put(StoredKey key, long atRevision) {
    keys.put(key.engineId(), key);
    revision = Math.max(revision, atRevision);
  }

  /**
   * A delete of engine {@code engineId}'s key observed at {@code atRevision}; returns what this
   * view held for it.
   */
  Optional<StoredKey> delete(String engineId, long atRevision) {
    revision = Math.max(revision, atRevision);
    return Optional.ofNullable(keys.remove(engineId));
  }
}
