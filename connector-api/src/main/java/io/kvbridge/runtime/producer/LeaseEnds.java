package io.kvbridge.runtime.producer;

import io.kvbridge.lease.Lease;
import io.kvbridge.lease.LeaseEndView;
import io.kvbridge.lease.LeaseListener;
import io.kvbridge.lease.LeaseTable;
import io.kvbridge.lease.LeaseView;
import io.kvbridge.observe.TransferSpan;
import io.kvbridge.observe.TransferSpans;
import io.kvbridge.runtime.engine.ConnectorCounters;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * What P keeps beside its lease table about each live lease, and what it does when one ends: the
 * consumers that confirmed or renewed it (a lease whose only renewer is gone or restarted can be
 * revoked before it would expire), its span while tracing, and the queue of ended leases for {@code
 * doneSending}; each end is counted and logged at the level it deserves.
 *
 * <p>Threads: thread-safe; the lease table calls it on whichever thread ends a lease, the handshake
 * server on its own when a consumer restarts.
 */
final class LeaseEnds implements LeaseListener {

  // Under the producer's name, where a lease's end has always been logged.
  private static final System.Logger LOG = System.getLogger(Producer.class.getName());

  private final ConnectorCounters counters;
  private final ConcurrentLinkedQueue<String> ended = new ConcurrentLinkedQueue<>();
  private final ConcurrentLinkedQueue<RestartedConsumer> restartedConsumers =
      new ConcurrentLinkedQueue<>();
  // Per live lease, the consumers that confirmed or renewed it: a lease whose only renewer is gone
  // can be revoked before it would expire.
  private final Map<String, Set<String>> renewers = new ConcurrentHashMap<>();
  // Per live lease, its span while tracing; nothing is kept untraced.
  private final Map<String, TransferSpan> leaseSpans = new ConcurrentHashMap<>();

  LeaseEnds(ConnectorCounters counters) {
    this.counters = counters;
  }

  /** Lease {@code requestId} is traced as {@code span} until it ends. */
  void traced(String requestId, TransferSpan span) {
    leaseSpans.put(requestId, span);
  }

  /** Lease {@code requestId} ended before its span was known: the span ends now. */
  void endedBeforeTraced(String requestId, TransferSpan span) {
    if (leaseSpans.remove(requestId, span)) {
      span.end();
    }
  }

  /** Consumer {@code consumer} confirmed or renewed lease {@code requestId}. */
  void renewedBy(String requestId, String consumer) {
    renewers.computeIfAbsent(requestId, k -> ConcurrentHashMap.newKeySet()).add(consumer);
  }

  /** Lease {@code requestId} ended before its renewer was recorded: forgets its renewers. */
  void forgetRenewers(String requestId) {
    renewers.remove(requestId);
  }

  /** The requests whose leases ended since the last call. */
  Set<String> drainEnded() {
    Set<String> out = new HashSet<>();
    for (String id = ended.poll(); id != null; id = ended.poll()) {
      out.add(id);
    }
    return out;
  }

  /**
   * Consumer {@code engineId} came back as a later start of itself: the leases only its earlier
   * start confirmed or renewed (every lease only that engine id kept alive now, before its later
   * start confirms anything) are revoked at P's next step or sweep, instead of being left to
   * expire: that process and its reads are gone. Called on the handshake server's thread, which
   * leaves the lease table to the engine's.
   */
  void consumerRestarted(String engineId, long oldIncarnation, long newIncarnation) {
    List<String> leasesOfTheEarlierStart = leasesOnlyKeptBy(engineId);
    if (leasesOfTheEarlierStart.isEmpty()) {
      return;
    }
    restartedConsumers.add(
        new RestartedConsumer(
            leasesOfTheEarlierStart,
            "consumer "
                + engineId
                + " restarted: incarnation "
                + Long.toHexString(newIncarnation)
                + " replaces "
                + Long.toHexString(oldIncarnation)));
  }

  /** Revokes the leases of the consumers' earlier starts that handshakes replaced. */
  void revokeLeasesOfRestartedConsumers(LeaseTable leases) {
    for (RestartedConsumer r = restartedConsumers.poll();
        r != null;
        r = restartedConsumers.poll()) {
      for (String requestId : r.leases()) {
        leases.revoke(requestId, r.why());
      }
    }
  }

  /** The leases of a consumer's earlier start, to revoke, and why. */
  private record RestartedConsumer(List<String> leases, String why) {}

  /** The live leases whose only confirming or renewing consumer is {@code engineId}. */
  List<String> leasesOnlyKeptBy(String engineId) {
    List<String> kept = new ArrayList<>();
    for (Map.Entry<String, Set<String>> e : renewers.entrySet()) {
      if (e.getValue().equals(Set.of(engineId))) {
        kept.add(e.getKey());
      }
    }
    return kept;
  }

  @Override
  public void granted(Lease lease) {
    counters.granted(lease);
  }

  @Override
  public void renewed(LeaseView lease) {
    counters.renewed(lease);
  }

  @Override
  public void ended(LeaseEndView end) {
    ended.add(end.lease().requestId());
    renewers.remove(end.lease().requestId());
    counters.ended(end);
    TransferSpan span = leaseSpans.remove(end.lease().requestId());
    if (span != null) {
      span.tag(TransferSpans.END_REASON, end.reason().name().toLowerCase(Locale.ROOT));
      span.end();
    }
    Level level =
        switch (end.reason()) {
          case READ -> Level.DEBUG;
          case REVOKED, RELEASED -> Level.INFO;
          case EXPIRED -> Level.WARNING;
        };
    LOG.log(
        level,
        "lease of {0} ended {1} ({2}); {3} blocks go back to the pool",
        end.lease().requestId(),
        end.reason(),
        end.detail(),
        end.lease().blockIds().size());
  }
}
