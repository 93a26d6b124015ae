package io.kvbridge.runtime.consumer;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.net.HandshakeAddress;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.runtime.engine.ConnectorCounters;
import io.kvbridge.runtime.engine.Ranks;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import io.kvbridge.wire.ConsumerHandshake;
import io.kvbridge.wire.Handshake;
import io.kvbridge.wire.HandshakeChannel;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The consumer's side of handshakes: knows the producers it completed a handshake with, starts a
 * handshake when a load needs a producer it does not know (or no longer trusts), and tells loads
 * whether their producer is ready, still being handshaken, or unreachable.
 *
 * <p>A producer across the network is handshaken on one of at most {@value #THREADS} daemon
 * threads, with one handshake in flight per producer and at most {@value #QUEUE} waiting, so a slow
 * or silent producer never stalls an engine step and a flood of made-up addresses is refused at
 * once; each handshake is bounded as a whole by {@code handshake.timeout}. A producer in this JVM
 * is handshaken inline.
 *
 * <p>What it knows of producers is kept in its {@link ProducerPeers} books, keyed by (producer
 * engine id, incarnation, agent name). Before it loads anything of an answer it reads the agent
 * name of every rank's metadata ({@link Transport#peerAgentName}) and refuses the answer ({@link
 * RejectedInput#FORGED_PEER}) if a name belongs to another known producer or to this engine, if the
 * incarnation is older than the one known (stale metadata), or if the known incarnation names other
 * agents. The same incarnation with the same agents keeps what is loaded (and where it was found);
 * a blob that differs is never loaded. A newer incarnation (the producer restarted under the same
 * engine id) has the old agents' metadata invalidated before the new is loaded, and the peer is
 * replaced everywhere. A refused answer changes nothing this engine uses to reach a live producer,
 * and its producer is not listed among the peers. A producer that failed a read or stopped
 * answering is marked suspect and handshaken again before it is used again.
 *
 * <p>Threads: {@link #resolve} and {@link #endRound} run under the connector's lock; handshakes run
 * on the pool's threads; the books are thread-safe.
 */
public final class HandshakeClient implements AutoCloseable {

  static final int THREADS = 8;
  static final int QUEUE = 64;

  private static final System.Logger LOG = System.getLogger(HandshakeClient.class.getName());

  private final ConnectorSettings settings;
  private final Ranks ranks;
  private final ConnectorCounters counters;
  private final ProducerPeers peers;
  private final Map<PeerKey, CompletableFuture<ProducerPeer>> inFlight = new ConcurrentHashMap<>();
  private final ThreadPoolExecutor threads;

  /** A client for this engine's {@code ranks}; it handshakes only once they are all registered. */
  HandshakeClient(ConnectorSettings settings, Ranks ranks, ConnectorCounters counters) {
    this.settings = settings;
    this.ranks = ranks;
    this.counters = counters;
    this.peers = new ProducerPeers(ranks);
    this.threads =
        new ThreadPoolExecutor(
            THREADS,
            THREADS,
            30,
            TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(QUEUE),
            r -> {
              Thread t = new Thread(r, "kvbridge-handshake-client-" + settings.engineId());
              t.setDaemon(true);
              return t;
            });
    threads.allowCoreThreadTimeOut(true);
  }

  /** Whether a load's producer is usable now. */
  sealed interface Resolution {
    /** Handshaken and current. */
    record Ready(ProducerPeer peer) implements Resolution {}

    /** A handshake is in flight; ask again on a later step. */
    record Pending() implements Resolution {}

    /** The producer cannot be used for this load; {@code reason} says why. */
    record Failed(String reason) implements Resolution {}
  }

  /**
   * Whether producer {@code engineId} at {@code address}, incarnation {@code incarnation}, is
   * ready; starts a handshake if it is not and none is in flight.
   */
  Resolution resolve(String engineId, String address, long incarnation) {
    Optional<ProducerPeer> known = peers.trusted(engineId, address, incarnation);
    if (known.isPresent()) {
      return new Resolution.Ready(known.get());
    }
    PeerKey key = new PeerKey(engineId, address);
    CompletableFuture<ProducerPeer> handshake = inFlight.get(key);
    if (handshake == null) {
      handshake = start(key);
      inFlight.put(key, handshake);
    }
    if (!handshake.isDone()) {
      return new Resolution.Pending();
    }
    ProducerPeer peer;
    try {
      peer = handshake.join();
    } catch (CompletionException e) {
      return new Resolution.Failed(
          e.getCause() == null ? e.getMessage() : e.getCause().getMessage());
    }
    if (peer.incarnation() != incarnation) {
      return new Resolution.Failed(
          "the lease was granted by incarnation "
              + Long.toHexString(incarnation)
              + " of producer "
              + engineId
              + ", which now answers as incarnation "
              + Long.toHexString(peer.incarnation())
              + ": it restarted, and its leases ended with it");
    }
    return new Resolution.Ready(peer);
  }

  /**
   * Forgets the handshakes that finished: every load waiting on them saw their outcome this round,
   * and a later load asking for the same producer starts afresh.
   */
  void endRound() {
    inFlight.values().removeIf(CompletableFuture::isDone);
  }

  /** The current peer of {@code engineId}, if handshaken. */
  Optional<ProducerPeer> current(String engineId) {
    return peers.current(engineId);
  }

  /** The peer whose transport agent is {@code agent}, if any. */
  Optional<ProducerPeer> byAgent(String agent) {
    return peers.byAgent(agent);
  }

  /**
   * Marks {@code engineId} suspect (it failed a read or went silent) and handshakes with it again
   * at once: it is not used until that handshake succeeds, and if it fails the producer is {@link
   * #gone} and forgotten.
   */
  void suspect(String engineId) {
    peers
        .suspect(engineId)
        .ifPresent(
            peer -> inFlight.computeIfAbsent(new PeerKey(engineId, peer.address()), this::start));
  }

  /**
   * Why producer {@code engineId} went away after {@code since} (an {@link #epoch()} value), if it
   * did; see {@link ProducerPeers#goneSince}.
   */
  Optional<String> goneSince(String engineId, long since) {
    return peers.goneSince(engineId, since);
  }

  /** A counter that moves on every producer that goes away; loads note it when they start. */
  long epoch() {
    return peers.epoch();
  }

  /**
   * Forgets producer {@code engineId}, which is known to be gone (e.g. its registration in a
   * discovery service expired): its metadata is dropped and the loads tied to it fail.
   */
  void producerGone(String engineId, String why) {
    peers.producerGone(engineId, why);
  }

  /**
   * Forgets the producers that went away at or before {@code oldest}, the epoch of the oldest load
   * still in flight: no load can be failed by them any more, so a fleet's churn does not pile up.
   */
  void forgetGoneAtOrBefore(long oldest) {
    peers.forgetGoneAtOrBefore(oldest);
  }

  /** Every producer handshaken. */
  Map<String, ProducerPeer> peers() {
    return peers.peers();
  }

  @Override
  public void close() {
    threads.shutdownNow();
  }

  private CompletableFuture<ProducerPeer> start(PeerKey key) {
    HandshakeChannel channel;
    HandshakeAddress address;
    try {
      address = HandshakeAddress.parse(key.address());
      channel = HandshakeChannel.forAddress(address);
    } catch (IllegalArgumentException e) {
      return refused(key, e.getMessage());
    }
    if (!channel.mayBlock()) {
      try {
        return CompletableFuture.completedFuture(timedHandshake(channel, address, key));
      } catch (HandshakeFailedException e) {
        counters.rejected(e.kind(), e.getMessage());
        forgetIfSuspect(key, e.getMessage());
        return CompletableFuture.failedFuture(e);
      }
    }
    try {
      return CompletableFuture.supplyAsync(
          () -> {
            try {
              return timedHandshake(channel, address, key);
            } catch (HandshakeFailedException e) {
              counters.rejected(e.kind(), e.getMessage());
              forgetIfSuspect(key, e.getMessage());
              throw new CompletionException(e);
            }
          },
          threads);
    } catch (RejectedExecutionException e) {
      return refused(
          key,
          "too many handshakes in flight on engine "
              + settings.engineId()
              + " ("
              + (THREADS + QUEUE)
              + "); not handshaking with "
              + key.engineId()
              + " at "
              + key.address());
    }
  }

  /** A suspect producer whose new handshake failed is gone: forgotten, its metadata dropped. */
  private void forgetIfSuspect(PeerKey key, String reason) {
    if (peers.suspectedAt(key.engineId(), key.address())) {
      peers.producerGone(key.engineId(), "stopped answering: " + reason);
    }
  }

  /** A handshake refused before it started: counted as refused and as failed in no time. */
  private CompletableFuture<ProducerPeer> refused(PeerKey key, String reason) {
    counters.rejected(RejectedInput.HANDSHAKE_REFUSED, reason);
    counters.handshakeFailed(key.engineId(), 0, reason);
    return CompletableFuture.failedFuture(new HandshakeFailedException(reason));
  }

  /** {@link #handshake}, reporting how long it took and how it ended. */
  private ProducerPeer timedHandshake(
      HandshakeChannel channel, HandshakeAddress target, PeerKey key)
      throws HandshakeFailedException {
    long started = settings.clock().nanoTime();
    try {
      ProducerPeer peer = handshake(channel, target, key);
      counters.handshakeCompleted(key.engineId(), settings.clock().nanoTime() - started);
      ClockOffset estimate = peer.clock().current();
      counters.clockEstimated(key.engineId(), estimate.offsetNanos(), estimate.uncertaintyNanos());
      return peer;
    } catch (HandshakeFailedException e) {
      counters.handshakeFailed(
          key.engineId(), settings.clock().nanoTime() - started, e.getMessage());
      throw e;
    }
  }

  private ProducerPeer handshake(HandshakeChannel channel, HandshakeAddress target, PeerKey key)
      throws HandshakeFailedException {
    String engineId = key.engineId();
    String address = key.address();
    Handshake.Request request =
        new Handshake.Request(
            settings.engineId(),
            settings.incarnation(),
            ranks.layouts(),
            ranks.lead().localMetadata());
    ConsumerHandshake.Outcome outcome;
    try {
      outcome =
          ConsumerHandshake.run(
              channel,
              target,
              request,
              settings.handshakeSecret(),
              settings.handshakeTimeout(),
              settings.clock()::nanoTime);
    } catch (ConsumerHandshake.RefusedFrameException e) {
      if (e.authentication()) {
        counters.rejected(RejectedInput.HANDSHAKE_UNAUTHENTICATED, e.getMessage());
      }
      throw new HandshakeFailedException(
          "handshake with " + engineId + " at " + address + " refused: " + e.getMessage());
    } catch (IOException | IllegalArgumentException e) {
      throw new HandshakeFailedException(
          "handshake with " + engineId + " at " + address + " failed: " + e.getMessage());
    }
    Handshake.Response response = outcome.response();
    long sent = outcome.requestSentNanos();
    long receivedAt = outcome.answerReceivedNanos();
    if (response instanceof Handshake.Refused refused) {
      throw new HandshakeFailedException(
          "producer " + engineId + " refused the handshake: " + refused.reason());
    }
    Handshake.Accepted accepted = (Handshake.Accepted) response;
    if (!accepted.producerEngineId().equals(engineId)) {
      throw new HandshakeFailedException(
          "transfer params name producer "
              + engineId
              + " but "
              + address
              + " answers as "
              + accepted.producerEngineId());
    }
    List<KvLayout> theirs = accepted.ranks().stream().map(Handshake.Rank::layout).toList();
    Optional<String> problem =
        KvLayout.partitionProblem(theirs)
            .or(() -> ranks.layout(0).incompatibilityWith(theirs.get(0)));
    if (problem.isPresent()) {
      throw new HandshakeFailedException(
          "producer " + engineId + "'s KV cannot be loaded here: " + problem.get());
    }
    ClockOffset sample = ClockOffset.estimate(sent, accepted.clockSampleNanos(), receivedAt);
    List<String> names = agentNames(engineId, accepted);
    ProducerPeer peer = peers.admit(engineId, address, accepted, names, sample, sent, receivedAt);
    LOG.log(
        Level.INFO,
        "handshake with {0} at {1}: agent {2}, incarnation {3}, clock offset {4} ns (±{5} ns)",
        engineId,
        address,
        peer.agentName(),
        Long.toHexString(peer.incarnation()),
        peer.clock().current().offsetNanos(),
        peer.clock().current().uncertaintyNanos());
    return peer;
  }

  /**
   * The agent name each rank's metadata names, by rank, read without loading anything.
   *
   * @throws HandshakeFailedException if a blob is malformed
   */
  private List<String> agentNames(String engineId, Handshake.Accepted accepted)
      throws HandshakeFailedException {
    List<String> names = new ArrayList<>(accepted.ranks().size());
    for (Handshake.Rank rank : accepted.ranks()) {
      try {
        names.add(ranks.lead().peerAgentName(rank.metadata()));
      } catch (TransportException e) {
        throw new HandshakeFailedException(
            "producer " + engineId + " metadata rejected: " + e.getMessage());
      }
    }
    return names;
  }

  private record PeerKey(String engineId, String address) {}

  /** A handshake that did not produce a usable peer. */
  static final class HandshakeFailedException extends Exception {
    private static final long serialVersionUID = 1L;

    private final RejectedInput kind;

    HandshakeFailedException(String message) {
      this(RejectedInput.HANDSHAKE_REFUSED, message);
    }

    HandshakeFailedException(RejectedInput kind, String message) {
      super(message);
      this.kind = kind;
    }

    /** What the refusal is counted as. */
    RejectedInput kind() {
      return kind;
    }
  }
}
