package io.kvbridge.runtime.consumer;

import io.kvbridge.observe.RejectedInput;
import io.kvbridge.runtime.consumer.HandshakeClient.HandshakeFailedException;
import io.kvbridge.runtime.engine.Ranks;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import io.kvbridge.wire.Handshake;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The consumer's books of the producers it handshook: the current peer of each producer and of each
 * agent, the producers suspected (to handshake again before their next use) and those gone, and
 * every producer agent loaded into this engine's transports. An answer is {@linkplain #admit
 * admitted} here, after {@link HandshakeClient} ran the exchange: refused as forged ({@link
 * RejectedInput#FORGED_PEER}) if it names agents of another known producer or of this engine, a
 * start older than the one known, or other agents for the start known; kept as it was for the same
 * start; loaded afresh, the old agents invalidated first, for a later start.
 *
 * <p>Threads: the maps are concurrent; every change to what is loaded, and to the peers with it, is
 * made under one lock.
 */
final class ProducerPeers {

  private static final System.Logger LOG = System.getLogger(ProducerPeers.class.getName());

  private final Ranks ranks;
  private final Map<String, ProducerPeer> peers = new ConcurrentHashMap<>();
  private final Map<String, ProducerPeer> byAgent = new ConcurrentHashMap<>();
  private final Set<String> suspects = ConcurrentHashMap.newKeySet();
  private final Map<String, Gone> gone = new ConcurrentHashMap<>();
  private final AtomicLong epoch = new AtomicLong();
  // Every producer agent loaded into this engine's transports, by name: whose it is and of which
  // start. Guarded, with what is loaded and with the peer maps' changes, by books.
  private final Map<String, LoadedAgent> loaded = new ConcurrentHashMap<>();
  private final Object books = new Object();

  ProducerPeers(Ranks ranks) {
    this.ranks = ranks;
  }

  /**
   * The peer of {@code engineId} if it is known at {@code address} as {@code incarnation} and not
   * suspect.
   */
  Optional<ProducerPeer> trusted(String engineId, String address, long incarnation) {
    ProducerPeer known = peers.get(engineId);
    return known != null
            && known.address().equals(address)
            && known.incarnation() == incarnation
            && !suspects.contains(engineId)
        ? Optional.of(known)
        : Optional.empty();
  }

  /** The current peer of {@code engineId}, if handshaken. */
  Optional<ProducerPeer> current(String engineId) {
    return Optional.ofNullable(peers.get(engineId));
  }

  /** The peer whose transport agent is {@code agent}, if any. */
  Optional<ProducerPeer> byAgent(String agent) {
    return Optional.ofNullable(byAgent.get(agent));
  }

  /** Marks the known producer {@code engineId} suspect; the peer, if this newly suspects it. */
  Optional<ProducerPeer> suspect(String engineId) {
    ProducerPeer peer = peers.get(engineId);
    return peer != null && suspects.add(engineId) ? Optional.of(peer) : Optional.empty();
  }

  /** Whether {@code engineId} is known at {@code address} and suspected. */
  boolean suspectedAt(String engineId, String address) {
    ProducerPeer peer = peers.get(engineId);
    return peer != null && suspects.contains(engineId) && peer.address().equals(address);
  }

  /**
   * Why producer {@code engineId} went away after {@code since} (an {@link #epoch()} value), if it
   * did: its handshake failed after it was suspected, or a discovery service said it is gone. Loads
   * created before that fail at once with the reason instead of waiting for their timeouts; later
   * loads try a fresh handshake.
   */
  Optional<String> goneSince(String engineId, long since) {
    Gone g = gone.get(engineId);
    return g != null && g.epoch > since ? Optional.of(g.reason) : Optional.empty();
  }

  /** A counter that moves on every producer that goes away; loads note it when they start. */
  long epoch() {
    return epoch.get();
  }

  /**
   * Forgets producer {@code engineId}, which is known to be gone (e.g. its registration in a
   * discovery service expired): its metadata is dropped and the loads tied to it fail.
   */
  void producerGone(String engineId, String why) {
    ProducerPeer peer;
    synchronized (books) {
      peer = peers.remove(engineId);
      if (peer != null) {
        forgetAgents(peer);
      }
      suspects.remove(engineId);
    }
    gone.put(engineId, new Gone(why, epoch.incrementAndGet()));
    // In a fleet every consumer hears of every producer that leaves; only one it knew matters.
    LOG.log(peer != null ? Level.WARNING : Level.DEBUG, "producer {0} is gone: {1}", engineId, why);
  }

  /**
   * Forgets the producers that went away at or before {@code oldest}, the epoch of the oldest load
   * still in flight: no load can be failed by them any more, so a fleet's churn does not pile up.
   */
  void forgetGoneAtOrBefore(long oldest) {
    gone.values().removeIf(g -> g.epoch <= oldest);
  }

  /** Every producer handshaken. */
  Map<String, ProducerPeer> peers() {
    return Map.copyOf(peers);
  }

  /**
   * Admits producer {@code engineId}'s answer from {@code address}, whose ranks' metadata name the
   * agents {@code names}, with the clock sample of an exchange sent at {@code sent} and answered at
   * {@code receivedAt}: the peer it is now known as.
   *
   * @throws HandshakeFailedException if the answer is refused as forged or its metadata is
   *     rejected; nothing this engine uses to reach a live producer changed then
   */
  ProducerPeer admit(
      String engineId,
      String address,
      Handshake.Accepted accepted,
      List<String> names,
      ClockOffset sample,
      long sent,
      long receivedAt)
      throws HandshakeFailedException {
    ProducerPeer peer;
    synchronized (books) {
      ProducerPeer old = peers.get(engineId);
      refuseForgery(engineId, address, accepted.producerIncarnation(), names, old);
      if (old != null && old.incarnation() == accepted.producerIncarnation()) {
        // Same process as before: what was loaded of it stays, whatever this answer's blobs say,
        // and so does where it was first found; only an answer from there heals the clock
        // estimate.
        if (old.address().equals(address)) {
          old.clock().offer(sent, accepted.clockSampleNanos(), receivedAt);
        }
        peer = old;
      } else {
        if (old != null) {
          // A restarted producer may keep its agent names; the transport takes new metadata for a
          // known name only after the old is forgotten.
          forgetAgents(old);
          LOG.log(
              Level.INFO,
              "producer {0} restarted: incarnation {1} replaces {2}",
              engineId,
              Long.toHexString(accepted.producerIncarnation()),
              Long.toHexString(old.incarnation()));
        }
        peer =
            new ProducerPeer(
                engineId,
                address,
                accepted.producerIncarnation(),
                load(engineId, accepted, names),
                new ClockSync(sample, receivedAt));
      }
      peers.put(engineId, peer);
      byAgent.put(peer.agentName(), peer);
      if (peer.address().equals(address)) {
        // Only an answer from where the producer is known clears a suspicion of it.
        suspects.remove(engineId);
      }
    }

    return peer;
  }

  /**
   * Refuses an answer that would have this consumer load metadata it must not: agents of another
   * known producer (or of this engine), a start of the producer older than the one known (stale
   * metadata, say an answer captured before it restarted), or other agents for the start known.
   * Called under {@link #books}, before anything is loaded.
   */
  private void refuseForgery(
      String engineId, String address, long incarnation, List<String> names, ProducerPeer old)
      throws HandshakeFailedException {
    String from = "producer " + engineId + " at " + address + " (incarnation ";
    Set<String> seen = new HashSet<>();
    for (String name : names) {
      if (!seen.add(name)) {
        throw forged(from + Long.toHexString(incarnation) + ") names agent " + name + " twice");
      }
      if (ranks.transports().stream().anyMatch(t -> t.agentName().equals(name))) {
        throw forged(
            from
                + Long.toHexString(incarnation)
                + ") names agent "
                + name
                + ", one of this engine's");
      }
      LoadedAgent owner = loaded.get(name);
      if (owner != null && !owner.engineId().equals(engineId)) {
        throw forged(
            from
                + Long.toHexString(incarnation)
                + ") names agent "
                + name
                + ", which belongs to producer "
                + owner.engineId()
                + " (incarnation "
                + Long.toHexString(owner.incarnation())
                + ")");
      }
    }
    if (old == null) {
      return;
    }
    if (ConnectorSettings.isLaterIncarnation(old.incarnation(), incarnation)) {
      throw forged(
          from
              + Long.toHexString(incarnation)
              + ") answers as a start older than the known incarnation "
              + Long.toHexString(old.incarnation())
              + ": stale metadata");
    }
    List<String> known = old.ranks().stream().map(ProducerPeer.Rank::agentName).toList();
    if (old.incarnation() == incarnation && !known.equals(names)) {
      throw forged(
          from
              + Long.toHexString(incarnation)
              + ") names agents "
              + names
              + ", but that incarnation's agents are "
              + known);
    }
  }

  /** A handshake refused as forged: counted as such, not as an ordinary refusal. */
  private static HandshakeFailedException forged(String what) {
    return new HandshakeFailedException(
        RejectedInput.FORGED_PEER, "handshake refused as forged: " + what);
  }

  /**
   * Loads every rank's metadata into every rank's transport and records whose agents they are.
   * Called under {@link #books}.
   */
  private List<ProducerPeer.Rank> load(
      String engineId, Handshake.Accepted accepted, List<String> names)
      throws HandshakeFailedException {
    List<ProducerPeer.Rank> peerRanks = new ArrayList<>(accepted.ranks().size());
    for (int r = 0; r < accepted.ranks().size(); r++) {
      Handshake.Rank rank = accepted.ranks().get(r);
      String agent = names.get(r);
      try {
        // Every rank of this engine may read from every rank of the producer.
        for (Transport transport : ranks.transports()) {
          String named = transport.loadRemoteMetadata(rank.metadata());
          if (!named.equals(agent)) {
            throw new TransportException(
                "the blob of rank " + r + " named agent " + agent + " but loaded as " + named);
          }
        }
      } catch (TransportException e) {
        for (int loadedRank = 0; loadedRank <= r; loadedRank++) {
          for (Transport transport : ranks.transports()) {
            transport.invalidateRemote(names.get(loadedRank));
          }
        }
        throw new HandshakeFailedException(
            "producer " + engineId + " metadata rejected: " + e.getMessage());
      }
      peerRanks.add(
          new ProducerPeer.Rank(
              agent, rank.layout(), rank.regionAddresses(), rank.deviceId(), rank.memoryKind()));
    }
    for (String name : names) {
      loaded.put(name, new LoadedAgent(engineId, accepted.producerIncarnation(), name));
    }
    return peerRanks;
  }

  /** Drops every agent of {@code peer} from every rank's transport. Called under {@link #books}. */
  private void forgetAgents(ProducerPeer peer) {
    byAgent.remove(peer.agentName(), peer);
    for (ProducerPeer.Rank rank : peer.ranks()) {
      loaded.remove(rank.agentName());
      for (Transport transport : ranks.transports()) {
        transport.invalidateRemote(rank.agentName());
      }
    }
  }

  /** A producer's agent whose metadata every rank's transport loaded. */
  private record LoadedAgent(String engineId, long incarnation, String agentName) {}

  private record Gone(String reason, long epoch) {}
}
