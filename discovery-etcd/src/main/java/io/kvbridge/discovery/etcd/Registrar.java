package io.kvbridge.discovery.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.etcd.jetcd.options.PutOption;
import io.kvbridge.discovery.etcd.EtcdRequests.EtcdUnavailableException;
import io.kvbridge.time.DurationText;
import java.lang.System.Logger.Level;

/**
 * Keeps each local engine's key in etcd, an {@link EngineRecord} bound to a lease: grants the
 * lease, renews it, writes the record when it is new, missing or its load figures changed (at most
 * once per refresh interval), registers the engine again when the lease expired, and revokes the
 * lease when the engine goes (which removes the key, so peers learn at once).
 *
 * <p>Threads: confined to the discovery thread. Every method may throw {@link
 * EtcdUnavailableException} when etcd does not answer; the caller then ends the session.
 */
final class Registrar {

  private static final System.Logger LOG = System.getLogger(EtcdDiscovery.class.getName());

  private final EtcdDiscoverySettings settings;

  Registrar(EtcdDiscoverySettings settings) {
    this.settings = settings;
  }

  /**
   * Renews {@code r}'s lease and writes its record when due; grants a new lease and writes the
   * record when the old lease expired. Does nothing before the engine's KV cache is registered.
   */
  void refresh(Client client, Registration r) {
    if (!r.ready()) {
      return;
    }
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
                  EtcdRequests.bytes(r.key),
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

  /**
   * Revokes {@code r}'s lease, which deletes its key: peers see the engine go at once. Without a
   * client (etcd unreachable) the key expires after its time to live instead.
   */
  void deregister(Client client, Registration r) {
    r.registered = false;
    if (r.leaseId == 0 || client == null) {
      return;
    }
    long leaseId = r.leaseId;
    r.leaseId = 0;
    try {
      await(client.getLeaseClient().revoke(leaseId));
      LOG.log(Level.INFO, "engine {0} removed its registration from etcd", r.engineId);
    } catch (EtcdUnavailableException e) {
      LOG.log(
          Level.WARNING,
          "engine {0}''s registration in etcd was not removed ({1}); it expires within {2}",
          r.engineId,
          EtcdRequests.describe(e.getCause()),
          DurationText.of(settings.ttl()));
    }
  }

  private <T> T await(java.util.concurrent.CompletableFuture<T> future) {
    return EtcdRequests.await(future, settings.requestTimeout());
  }
}
