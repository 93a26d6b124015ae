package io.kvbridge.runtime.producer;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.runtime.engine.ConnectorCounters;
import io.kvbridge.runtime.engine.Ranks;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.KvRegions;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import io.kvbridge.wire.Handshake;
import io.kvbridge.wire.HandshakeChannel;
import io.kvbridge.wire.ProducerHandshake;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * P's side of handshakes: the conversation itself (greeting, and with a deployment secret the
 * proof, the sealed request and answer) is {@link ProducerHandshake}'s; this class decides what to
 * answer a request that decoded and authenticated: it checks the consumer's layouts, loads the
 * consumer's transport metadata, and answers with P's own. Remembers which transport agent speaks
 * for which consumer, so notifications are attributed to the consumer that authenticated.
 *
 * <p>Before it loads a consumer's metadata it reads the agent name the blob names ({@link
 * Transport#peerAgentName}) and refuses ({@link RejectedInput#FORGED_PEER}) a request whose agent
 * belongs to another known consumer (or to this producer), one of an incarnation older than the
 * consumer's known one (a replayed handshake of an earlier start), and one naming another agent for
 * the known incarnation; nothing known changes then. A consumer that handshakes again with the same
 * incarnation keeps the metadata and layouts already loaded. One that comes back with a later
 * incarnation (it restarted under the same engine id) has its old agent's metadata invalidated
 * before the new one is loaded, and {@link Restarts} ends the old start's leases.
 *
 * <p>Threads: {@link #open} runs on the channel's I/O thread, the decision on its workers; state is
 * in concurrent maps, and one consumer's handshakes are serialized.
 */
public final class HandshakeResponder implements HandshakeChannel.Responder {

  private static final System.Logger LOG = System.getLogger(HandshakeResponder.class.getName());

  private final ConnectorSettings settings;
  private final Ranks ranks;
  private final Transport transport;
  private final ConnectorCounters counters;
  private final ProducerHandshake conversations;
  private final Restarts restarts;
  private final Map<String, String> consumersByAgent = new ConcurrentHashMap<>();
  private final Map<String, KnownConsumer> consumers = new ConcurrentHashMap<>();

  /**
   * Answers for {@code ranks}, which must all have their KV cache registered; tells {@code
   * restarts} of every consumer that comes back as a later start.
   */
  public HandshakeResponder(
      ConnectorSettings settings, Ranks ranks, ConnectorCounters counters, Restarts restarts) {
    this.settings = settings;
    this.ranks = ranks;
    this.transport = ranks.lead();
    this.counters = counters;
    this.conversations =
        new ProducerHandshake(
            settings.handshakeSecret(),
            this::decide,
            new ProducerHandshake.Listener() {
              @Override
              public void unauthenticated(String why) {
                counters.rejected(RejectedInput.HANDSHAKE_UNAUTHENTICATED, why);
                LOG.log(Level.WARNING, "handshake refused: not authenticated: {0}", why);
              }

              @Override
              public void malformed(String why) {
                counters.rejected(RejectedInput.HANDSHAKE_REFUSED, why);
                LOG.log(Level.WARNING, "handshake refused: {0}", why);
              }
            });
    this.restarts = restarts;
  }

  @Override
  public HandshakeChannel.Conversation open() {
    return conversations.open();
  }

  /** The answer to a request that decoded and, with a secret, authenticated. */
  private Handshake.Response decide(Handshake.Request request) {
    Optional<String> problem =
        KvLayout.partitionProblem(request.consumerRanks())
            .or(
                () ->
                    request.consumerRanks().get(0).incompatibilityQuotingOnlyThis(ranks.layout(0)));
    if (problem.isPresent()) {
      return refusedWith(
          "incompatible KV layout: consumer "
              + request.consumerEngineId()
              + " vs this producer: "
              + problem.get());
    }
    try {
      load(request);
    } catch (Refusal refusal) {
      return refusedWith(refusal.kind, refusal.getMessage());
    }
    List<Handshake.Rank> mine = new ArrayList<>(ranks.count());
    for (int r = 0; r < ranks.count(); r++) {
      KvRegions memory = ranks.memory(r);
      mine.add(
          new Handshake.Rank(
              ranks.layout(r),
              memory.regions().stream().map(KvMemory::address).toList(),
              memory.deviceId(),
              memory.kind(),
              ranks.transport(r).localMetadata()));
    }
    Handshake.Accepted accepted =
        new Handshake.Accepted(
            settings.engineId(), settings.incarnation(), settings.clock().nanoTime(), mine);
    return accepted;
  }

  /** The layouts of consumer {@code engineId}'s ranks, as its last handshake gave them; or none. */
  public List<KvLayout> layoutsOf(String engineId) {
    KnownConsumer entry = consumers.get(engineId);
    if (entry == null) {
      return List.of();
    }
    synchronized (entry) {
      return entry.layouts;
    }
  }

  /** The consumer engine id of a transport agent that completed a handshake, if any. */
  public Optional<String> consumerOf(String agent) {
    return Optional.ofNullable(consumersByAgent.get(agent));
  }

  /**
   * Forgets a consumer's agent that can no longer be reached: its transport metadata is invalidated
   * and its messages are refused as from an unknown peer until it handshakes again.
   */
  public void forget(String agent) {
    String consumer = consumersByAgent.remove(agent);
    if (consumer == null) {
      return;
    }
    KnownConsumer entry = consumers.get(consumer);
    if (entry != null) {
      synchronized (entry) {
        if (agent.equals(entry.agent)) {
          entry.agent = null;
        }
      }
    }
    transport.invalidateRemote(agent);
  }

  /** Forgets every agent of consumer {@code engineId}, which is known to be gone. */
  public void forgetConsumer(String engineId) {
    consumersByAgent.entrySet().stream()
        .filter(e -> e.getValue().equals(engineId))
        .map(Map.Entry::getKey)
        .toList()
        .forEach(this::forget);
  }

  /** The consumers that completed a handshake. */
  public Set<String> consumers() {
    return Set.copyOf(consumersByAgent.values());
  }

  /**
   * Loads the consumer's lead metadata, or keeps what is loaded of the same start of it.
   *
   * @return the consumer's agent
   * @throws Refusal if the request must not change what this producer knows of its consumers
   */
  private String load(Handshake.Request request) throws Refusal {
    String consumer = request.consumerEngineId();
    long incarnation = request.consumerIncarnation();
    String agent;
    try {
      agent = transport.peerAgentName(request.consumerMetadata());
    } catch (TransportException e) {
      LOG.log(Level.WARNING, "metadata of consumer {0} rejected: {1}", consumer, e.getMessage());
      throw new Refusal(
          RejectedInput.HANDSHAKE_REFUSED, "consumer metadata of " + consumer + " rejected");
    }
    String from = "consumer " + consumer + " (incarnation " + Long.toHexString(incarnation) + ")";
    if (ranks.transports().stream().anyMatch(t -> t.agentName().equals(agent))) {
      throw forged(from + " names agent " + agent + ", one of this producer's");
    }
    String owner = consumersByAgent.get(agent);
    if (owner != null && !owner.equals(consumer)) {
      throw forged(from + " names agent " + agent + ", which belongs to consumer " + owner);
    }
    KnownConsumer fresh = new KnownConsumer(incarnation);
    KnownConsumer known = consumers.putIfAbsent(consumer, fresh);
    KnownConsumer entry = known == null ? fresh : known;
    synchronized (entry) {
      if (ConnectorSettings.isLaterIncarnation(entry.incarnation, incarnation)) {
        throw forged(
            from
                + " is older than its known incarnation "
                + Long.toHexString(entry.incarnation)
                + ": a replayed handshake of an earlier start");
      }
      if (entry.agent != null && entry.incarnation == incarnation) {
        if (!entry.agent.equals(agent)) {
          throw forged(
              from + " names agent " + agent + ", but that start's agent is " + entry.agent);
        }
        // The same start of the consumer: its metadata and its layouts are loaded already.
        return entry.agent;
      }
      owner = consumersByAgent.get(agent);
      if (owner != null && !owner.equals(consumer)) {
        throw forged(from + " names agent " + agent + ", which belongs to consumer " + owner);
      }
      long replaced = entry.incarnation;
      boolean restarted = entry.incarnation != incarnation;
      if (entry.agent != null) {
        transport.invalidateRemote(entry.agent);
        consumersByAgent.remove(entry.agent, consumer);
        LOG.log(
            Level.INFO,
            "consumer {0} restarted: incarnation {1} replaces {2}",
            consumer,
            Long.toHexString(incarnation),
            Long.toHexString(entry.incarnation));
      }
      try {
        entry.agent = transport.loadRemoteMetadata(request.consumerMetadata());
      } catch (TransportException e) {
        entry.agent = null;
        LOG.log(Level.WARNING, "metadata of consumer {0} rejected: {1}", consumer, e.getMessage());
        throw new Refusal(
            RejectedInput.HANDSHAKE_REFUSED, "consumer metadata of " + consumer + " rejected");
      }
      entry.incarnation = incarnation;
      entry.layouts = request.consumerRanks();
      consumersByAgent.put(entry.agent, consumer);
      if (restarted) {
        restarts.restarted(consumer, replaced, incarnation);
      }
      return entry.agent;
    }
  }

  private static Refusal forged(String what) {
    return new Refusal(RejectedInput.FORGED_PEER, "handshake refused as forged: " + what);
  }

  private Handshake.Refused refusedWith(String reason) {
    return refusedWith(RejectedInput.HANDSHAKE_REFUSED, reason);
  }

  private Handshake.Refused refusedWith(RejectedInput kind, String reason) {
    counters.rejected(kind, reason);
    LOG.log(Level.WARNING, "handshake refused: {0}", reason);
    return new Handshake.Refused(reason);
  }

  /** Hears of a consumer that came back as a later start of itself. */
  @FunctionalInterface
  public interface Restarts {
    /**
     * Consumer {@code engineId}'s start {@code oldIncarnation} is over: {@code newIncarnation}
     * handshook and its agent replaced the old one's. Called on the handshake server's thread.
     */
    void restarted(String engineId, long oldIncarnation, long newIncarnation);
  }

  /** Why a request is refused, and what the refusal is counted as. */
  private static final class Refusal extends Exception {
    private static final long serialVersionUID = 1L;

    private final RejectedInput kind;

    Refusal(RejectedInput kind, String reason) {
      super(reason, null, false, false);
      this.kind = kind;
    }
  }

  /** A consumer's incarnation and the agent it loaded; guarded by its own monitor. */
  private static final class KnownConsumer {
    long incarnation;
    String agent;
    List<KvLayout> layouts = List.of();

    KnownConsumer(long incarnation) {
      this.incarnation = incarnation;
    }
  }
}
