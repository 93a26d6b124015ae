package io.kvbridge.runtime;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.transfer.KvMemory;
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
 * <p>A consumer that comes back with a new incarnation (it restarted under the same engine id) has
 * its old agent's metadata invalidated before the new one is loaded; one that handshakes again with
 * the same incarnation keeps the metadata already loaded.
 *
 * <p>Threads: {@link #open} runs on the channel's I/O thread, the decision on its workers; state is
 * in concurrent maps, and one consumer's handshakes are serialized.
 */
final class HandshakeResponder implements HandshakeChannel.Responder {

  private static final System.Logger LOG = System.getLogger(HandshakeResponder.class.getName());

  private final ConnectorSettings settings;
  private final Ranks ranks;
  private final Transport transport;
  private final ConnectorCounters counters;
  private final ProducerHandshake conversations;
  private final Map<String, String> consumersByAgent = new ConcurrentHashMap<>();
  private final Map<String, KnownConsumer> consumers = new ConcurrentHashMap<>();

  /** Answers for {@code ranks}, which must all have their KV cache registered. */
  HandshakeResponder(ConnectorSettings settings, Ranks ranks, ConnectorCounters counters) {
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
    Optional<String> agent = load(request);
    if (agent.isEmpty()) {
      return refusedWith("consumer metadata of " + request.consumerEngineId() + " rejected");
    }
    List<Handshake.Rank> mine = new ArrayList<>(ranks.count());
    for (int r = 0; r < ranks.count(); r++) {
      KvMemory memory = ranks.memory(r);
      mine.add(
          new Handshake.Rank(
              ranks.layout(r),
              memory.address(),
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
  List<KvLayout> layoutsOf(String engineId) {
    KnownConsumer entry = consumers.get(engineId);
    if (entry == null) {
      return List.of();
    }
    synchronized (entry) {
      return entry.layouts;
    }
  }

  /** The consumer engine id of a transport agent that completed a handshake, if any. */
  Optional<String> consumerOf(String agent) {
    return Optional.ofNullable(consumersByAgent.get(agent));
  }

  /**
   * Forgets a consumer's agent that can no longer be reached: its transport metadata is invalidated
   * and its messages are refused as from an unknown peer until it handshakes again.
   */
  void forget(String agent) {
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
  void forgetConsumer(String engineId) {
    consumersByAgent.entrySet().stream()
        .filter(e -> e.getValue().equals(engineId))
        .map(Map.Entry::getKey)
        .toList()
        .forEach(this::forget);
  }

  /** The consumers that completed a handshake. */
  Set<String> consumers() {
    return Set.copyOf(consumersByAgent.values());
  }

  private Optional<String> load(Handshake.Request request) {
    String consumer = request.consumerEngineId();
    KnownConsumer fresh = new KnownConsumer(request.consumerIncarnation());
    KnownConsumer known = consumers.putIfAbsent(consumer, fresh);
    KnownConsumer entry = known == null ? fresh : known;
    synchronized (entry) {
      if (entry.agent != null && entry.incarnation == request.consumerIncarnation()) {
        entry.layouts = request.consumerRanks();
        return Optional.of(entry.agent);
      }
      if (entry.agent != null) {
        transport.invalidateRemote(entry.agent);
        consumersByAgent.remove(entry.agent, consumer);
        LOG.log(
            Level.INFO,
            "consumer {0} restarted: incarnation {1} replaces {2}",
            consumer,
            Long.toHexString(request.consumerIncarnation()),
            Long.toHexString(entry.incarnation));
      }
      try {
        entry.agent = transport.loadRemoteMetadata(request.consumerMetadata());
      } catch (TransportException e) {
        entry.agent = null;
        LOG.log(Level.WARNING, "metadata of consumer {0} rejected: {1}", consumer, e.getMessage());
        return Optional.empty();
      }
      entry.incarnation = request.consumerIncarnation();
      entry.layouts = request.consumerRanks();
      consumersByAgent.put(entry.agent, consumer);
      return Optional.of(entry.agent);
    }
  }

  private Handshake.Refused refusedWith(String reason) {
    counters.rejected(RejectedInput.HANDSHAKE_REFUSED, reason);
    LOG.log(Level.WARNING, "handshake refused: {0}", reason);
    return new Handshake.Refused(reason);
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
