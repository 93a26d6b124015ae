package io.kvbridge.runtime.producer;

import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.integrity.ReadDigest;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.lease.AckOutcome;
import io.kvbridge.lease.Lease;
import io.kvbridge.lease.LeaseTable;
import io.kvbridge.lease.ReadClaim;
import io.kvbridge.lease.Rejection;
import io.kvbridge.lease.ReleaseOutcome;
import io.kvbridge.lease.RenewOutcome;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.observe.TransferSpan;
import io.kvbridge.observe.TransferSpans;
import io.kvbridge.runtime.engine.BlockChecksums;
import io.kvbridge.runtime.engine.ConnectorCounters;
import io.kvbridge.runtime.engine.Ranks;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.FinishDecision;
import io.kvbridge.spi.FinishedRequest;
import io.kvbridge.spi.ProducerStatus;
import io.kvbridge.spi.StartedRequest;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import io.kvbridge.wire.HandshakeChannel;
import io.kvbridge.wire.LeaseRef;
import io.kvbridge.wire.ProtocolMessage;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * P's half of the pull protocol: grants leases, answers handshakes ({@link HandshakeResponder}),
 * confirms leases before a consumer reads them, validates completions (ACK/NACK), renews on
 * heartbeats, takes releases, and collects ended leases for {@code doneSending}.
 *
 * <p>Threads: the lease table is thread-safe; the handshake server calls the responder on its own
 * threads; everything else runs on the engine thread or the scheduled sweep.
 */
public final class Producer {

  private static final System.Logger LOG = System.getLogger(Producer.class.getName());

  private final ConnectorSettings settings;
  private final Transport transport;
  private final ConnectorCounters counters;
  private final LeaseTable leases;
  private final LeaseEnds ends;
  private final Ranks ranks;
  // Known once every rank registered its memory (start).
  private volatile ChecksumScheme scheme;
  private final LayerStreams streams;
  // The parameters of the streamed leases whose requests the engine has not finished.
  private final Map<String, TransferParams> streamed = new ConcurrentHashMap<>();
  private volatile HandshakeResponder responder;
  private volatile HandshakeChannel.Server server;

  public Producer(ConnectorSettings settings, Ranks ranks, ConnectorCounters counters) {
    this.settings = settings;
    this.ranks = ranks;
    this.transport = ranks.lead();
    this.counters = counters;
    this.ends = new LeaseEnds(counters);
    this.leases = new LeaseTable(settings.clock(), settings.leaseTerms(), ends);
    this.streams = new LayerStreams(ranks);
  }

  /** Starts answering handshakes, once every rank registered its KV cache. */
  public void start() throws IOException {
    this.scheme = ChecksumScheme.forMemory(ranks.memory(0).kind());
    this.responder = new HandshakeResponder(settings, ranks, counters, ends::consumerRestarted);
    this.server =
        HandshakeChannel.forAddress(settings.handshakeAddress())
            .serve(settings.handshakeAddress(), settings.engineId(), responder);
    KvLayout lead = ranks.layout(0);
    LOG.log(
        Level.INFO,
        "engine {0} (incarnation {1}) answers handshakes at {2}{3} ({4} rank(s), {5} blocks of {6}"
            + " tokens in {7})",
        settings.engineId(),
        Long.toHexString(settings.incarnation()),
        server.address(),
        settings.handshakeSecret().isPresent() ? ", authenticated" : "",
        ranks.count(),
        lead.blockCount(),
        lead.tokensPerBlock(),
        ranks.memory(0).kind());
  }

  /**
   * Grants a streamed lease on a request whose prefill starts: its parameters, or empty where the
   * request is not streamed (fewer tokens than {@code streaming.min-tokens}, no handshake server
   * yet, or one layer's checksums too many for one LAYERS message); the engine then goes the
   * whole-request way, {@link #requestFinished}.
   */
  public Optional<TransferParams> requestStarted(StartedRequest request) {
    HandshakeChannel.Server s = server;
    if (s == null) {
      return Optional.empty();
    }
    int perBlock = ranks.layout(0).tokensPerBlock();
    int tokens = Math.min(request.tokens(), request.blockIds().size() * perBlock);
    if (tokens == 0 || tokens < settings.streamingMinTokens()) {
      return Optional.empty();
    }
    List<Integer> blocks = request.blockIds().subList(0, (tokens + perBlock - 1) / perBlock);
    if (!LayerStreams.fits(request.requestId(), ranks.count(), blocks.size())) {
      return Optional.empty();
    }
    TransferParams params = grant(request.requestId(), blocks, tokens, request.prompt(), List.of());
    streamed.put(request.requestId(), params);
    streams.start(
        new LeaseRef(request.requestId(), params.leaseToken()), params.blockIds(), tokens, scheme);
    return Optional.of(params);
  }

  /**
   * Rank {@code rank} saved layer {@code layer} of {@code requestId} in its memory; whether every
   * rank has now saved a layer more (the layers to announce moved).
   */
  public boolean layerSaved(int rank, String requestId, int layer) {
    return streams.saved(rank, requestId, layer);
  }

  /** Sends every consumer that confirmed a streamed lease the layers it was not told of yet. */
  public void announceLayers() {
    for (Map.Entry<String, ProtocolMessage.Layers> due : streams.announcements(leases::isLive)) {
      answer(due.getKey(), "agent " + due.getKey(), due.getValue());
    }
  }

  public FinishDecision requestFinished(FinishedRequest request) {
    TransferParams granted = streamed.remove(request.requestId());
    if (granted != null) {
      return streamFinished(request, granted);
    }
    if (request.aborted() || !request.remoteDecode() || server == null) {
      return FinishDecision.freeNow();
    }
    int perBlock = ranks.layout(0).tokensPerBlock();
    int tokens = Math.min(request.computedTokens(), request.blockIds().size() * perBlock);
    if (tokens == 0) {
      return FinishDecision.freeNow();
    }
    // Every block holding a computed token, the partly filled tail included.
    List<Integer> blocks = request.blockIds().subList(0, (tokens + perBlock - 1) / perBlock);
    // Fingerprinted before the grant: from here on the blocks belong to the lease, and the engine
    // does not write them until doneSending names the request.
    List<List<Integer>> checksums = new ArrayList<>(ranks.count());
    for (int rank = 0; rank < ranks.count(); rank++) {
      checksums.add(BlockChecksums.of(scheme, ranks.memory(rank), blocks, tokens));
    }
    return FinishDecision.holdFor(
        grant(request.requestId(), blocks, tokens, request.prompt(), checksums));
  }

  /**
   * The engine finished a request it streamed: its last layers are announced (the engine says its
   * KV is complete); an aborted one has its lease revoked. The blocks are held until {@code
   * doneSending} names the request, unless its lease ended while it computed: then they are the
   * engine's again at once.
   */
  private FinishDecision streamFinished(FinishedRequest request, TransferParams params) {
    String id = request.requestId();
    boolean aborted = request.aborted() || !request.remoteDecode();
    if (aborted) {
      revokeStreamed(id, "the request was aborted while it was streamed");
    }
    // A lease that ended while the request computed was kept back from doneSending: free now.
    return streams.finish(id, !aborted) ? FinishDecision.freeNow() : FinishDecision.holdFor(params);
  }

  /**
   * Revokes a streamed lease and tells the consumers it was announced to (NACK {@code REVOKED}), so
   * that a load waiting for layers that will never come fails at once.
   */
  private void revokeStreamed(String requestId, String why) {
    if (leases.revoke(requestId, why).isPresent()) {
      streams
          .ending(requestId)
          .ifPresent(
              told ->
                  told.getValue()
                      .forEach(
                          agent ->
                              answer(
                                  agent,
                                  "agent " + agent,
                                  new ProtocolMessage.Nack(
                                      told.getKey(), ProtocolMessage.Nack.REVOKED))));
    }
  }

  /**
   * Grants the lease of {@code blocks}, holding {@code tokens} tokens of {@code prompt}: its
   * parameters, with {@code checksums} per rank, or none when it is streamed.
   */
  private TransferParams grant(
      String requestId,
      List<Integer> blocks,
      int tokens,
      TokenIds prompt,
      List<List<Integer>> checksums) {
    TransferSpan span = settings.tracer().startLease(requestId);
    TransferSpan grant = span.startChild(TransferSpans.LEASE_GRANT);
    String promptDigest = prompt.digest(tokens);
    Lease lease;
    try {
      lease =
          leases.grant(
              requestId,
              blocks,
              settings.acksRequired(),
              ReadDigest.binding(requestId, promptDigest, tokens, blocks));
    } catch (RuntimeException e) {
      grant.error(e.getMessage());
      grant.end();
      span.error(e.getMessage());
      span.end();
      throw e;
    }
    grant.end();
    if (span != TransferSpan.NONE) {
      span.tag(TransferSpans.BLOCKS, blocks.size());
      ends.traced(requestId, span);
      if (!leases.isLive(requestId)) {
        ends.endedBeforeTraced(requestId, span);
      }
    }
    return new TransferParams(
        settings.engineId(),
        settings.incarnation(),
        requestId,
        blocks,
        tokens,
        promptDigest,
        lease.token().value(),
        lease.deadlineNanos(),
        Optional.of(server.address().toString()),
        scheme,
        checksums,
        span.context(),
        checksums.isEmpty());
  }

  /**
   * A consumer's claim to read (or to have read) a lease skipping {@code skip} tokens, presenting
   * {@code presented}; it matches a lease when that is the read of the lease in the shape of this
   * producer's and the consumer's layouts.
   */
  private ReadClaim readOf(String consumer, ReadDigest presented, int skip) {
    return new ReadClaim(
        consumer,
        presented.toBytes(),
        skip,
        binding -> {
          List<KvLayout> theirs = responder.layoutsOf(consumer);
          return !theirs.isEmpty()
              && ReadDigest.of(binding, ReadDigest.shape(ranks.layouts(), theirs), skip)
                  .matches(presented);
        });
  }

  public boolean revoke(String requestId, String why) {
    return leases.revoke(requestId, why).isPresent();
  }

  /** Routes one consumer message; messages from agents that never handshook are counted. */
  public void onMessage(String fromAgent, ProtocolMessage.ToProducer message) {
    Optional<String> consumer =
        Optional.ofNullable(responder).flatMap(r -> r.consumerOf(fromAgent));
    if (consumer.isEmpty()) {
      counters.rejected(
          RejectedInput.UNKNOWN_PEER,
          message.getClass().getSimpleName() + " from agent " + fromAgent);
      return;
    }
    String from = consumer.get();
    message.handleBy(
        new ProtocolMessage.ToProducer.Handler() {
          @Override
          public void completion(ProtocolMessage.Completion completion) {
            onCompletion(fromAgent, from, completion);
          }

          @Override
          public void heartbeat(ProtocolMessage.Heartbeat heartbeat) {
            onHeartbeat(fromAgent, from, heartbeat);
          }

          @Override
          public void confirm(ProtocolMessage.Confirm confirm) {
            onConfirm(fromAgent, from, confirm);
          }

          @Override
          public void release(ProtocolMessage.Release release) {
            onRelease(from, release);
          }
        });
  }

  /**
   * Consumer {@code engineId} is gone: the leases only it was keeping alive are revoked, and its
   * transport agent is forgotten.
   */
  public void consumerGone(String engineId, String why) {
    String reason = "consumer " + engineId + " is gone: " + why;
    ends.leasesOnlyKeptBy(engineId).forEach(requestId -> leases.revoke(requestId, reason));
    HandshakeResponder r = responder;
    if (r != null) {
      r.forgetConsumer(engineId);
    }
  }

  /**
   * Ends what is due: the leases of consumers that restarted since the last call are revoked, and
   * every lease past its deadline expires.
   */
  public void expire() {
    ends.revokeLeasesOfRestartedConsumers(leases);
    leases.expire();
  }

  /** Whether any lease is live: a consumer may confirm, renew or complete it at any time. */
  public boolean holdsLeases() {
    return leases.size() > 0;
  }

  /**
   * The requests whose leases ended since the last call, for {@code doneSending}; a streamed
   * request the engine still computes is named once it finished it.
   */
  public Set<String> drainEnded() {
    return streams.releasable(ends.drainEnded());
  }

  /** The producer's part of the connector's status; safe on any thread. */
  public ProducerStatus status() {
    long now = settings.clock().nanoTime();
    HandshakeChannel.Server s = server;
    HandshakeResponder r = responder;
    return new ProducerStatus(
        s == null ? Optional.<String>empty() : Optional.of(s.address().toString()),
        leases.size(),
        leases.soonestDeadline().map(d -> Duration.ofNanos(Math.max(0, d - now))),
        counters.granted(),
        counters.ended(),
        counters.heartbeatsRenewed(),
        counters.heartbeatsIgnored(),
        r == null ? List.of() : r.consumers().stream().sorted().toList(),
        s == null ? Map.of() : s.droppedConnections());
  }

  public void close() {
    HandshakeChannel.Server s = server;
    if (s != null) {
      s.close();
    }
    for (String requestId : streams.requests()) {
      revokeStreamed(requestId, "connector closed");
    }
    leases.revokeAll("connector closed");
  }

  private void onCompletion(String fromAgent, String consumer, ProtocolMessage.Completion c) {
    LeaseRef ref = c.lease();
    if (!streams.complete(ref.requestId())
        && leases.find(ref.requestId()).filter(l -> l.token().matches(ref.token())).isPresent()) {
      // Nothing can have read layers not computed yet: the lease goes on.
      counters.rejected(
          RejectedInput.LAYERS_MISSING,
          "completion of " + ref.requestId() + " from " + consumer + " before its last layer");
      answer(
          fromAgent, consumer, new ProtocolMessage.Nack(ref, ProtocolMessage.Nack.LAYERS_MISSING));
      return;
    }
    AckOutcome outcome =
        leases.acknowledge(
            ref.requestId(), ref.token(), readOf(consumer, c.readDigest(), c.skipTokens()));
    if (outcome instanceof AckOutcome.Refused refused) {
      counters.rejected(
          toInput(refused.reason()), "completion of " + ref.requestId() + " from " + consumer);
      answer(fromAgent, consumer, new ProtocolMessage.Nack(ref, refused.reason().name()));
    } else {
      answer(fromAgent, consumer, new ProtocolMessage.Ack(ref));
    }
  }

  private void onConfirm(String fromAgent, String consumer, ProtocolMessage.Confirm c) {
    LeaseRef ref = c.lease();
    RenewOutcome outcome =
        leases.confirm(
            ref.requestId(), ref.token(), readOf(consumer, c.readDigest(), c.skipTokens()));
    if (outcome instanceof RenewOutcome.Renewed renewed) {
      renewedBy(ref.requestId(), consumer);
      answer(
          fromAgent,
          consumer,
          new ProtocolMessage.Confirmed(
              ref, renewed.deadlineNanos(), c.sentAtNanos(), settings.clock().nanoTime()));
      // A streamed lease: the consumer is told of every layer computed so far, then of each next.
      streams.confirmedBy(ref.requestId(), fromAgent);
      announceLayers();
    } else if (outcome instanceof RenewOutcome.Ignored ignored) {
      counters.rejected(
          toInput(ignored.reason()), "confirmation of " + ref.requestId() + " from " + consumer);
      answer(fromAgent, consumer, new ProtocolMessage.Nack(ref, ignored.reason().name()));
    }
  }

  private void onHeartbeat(String fromAgent, String consumer, ProtocolMessage.Heartbeat heartbeat) {
    List<ProtocolMessage.Renewal> renewals = new ArrayList<>(heartbeat.leases().size());
    for (LeaseRef ref : heartbeat.leases()) {
      // Coded, so a renewal allocates nothing but its place in the answer.
      long outcome = leases.renewDeadline(ref.requestId(), ref.token());
      boolean renewed = RenewOutcome.isRenewed(outcome);
      counters.heartbeatReceived(renewed);
      if (renewed) {
        renewedBy(ref.requestId(), consumer);
        renewals.add(new ProtocolMessage.Renewal(ref, outcome));
      } else {
        counters.rejected(
            toInput(RenewOutcome.rejection(outcome)),
            "heartbeat for " + ref.requestId() + " from " + consumer);
      }
    }
    if (!renewals.isEmpty()) {
      // The consumer checks its safety margin against the renewed deadlines.
      answer(
          fromAgent,
          consumer,
          new ProtocolMessage.Renewed(
              heartbeat.sentAtNanos(), settings.clock().nanoTime(), renewals));
    }
  }

  private void onRelease(String consumer, ProtocolMessage.Release release) {
    LeaseRef ref = release.lease();
    ReleaseOutcome outcome =
        leases.release(
            ref.requestId(), ref.token(), "released by " + consumer + ": " + release.reason());
    if (outcome instanceof ReleaseOutcome.Refused refused) {
      counters.rejected(
          toInput(refused.reason()), "release of " + ref.requestId() + " from " + consumer);
    }
  }

  private void renewedBy(String requestId, String consumer) {
    ends.renewedBy(requestId, consumer);
    if (!leases.isLive(requestId)) {
      ends.forgetRenewers(requestId); // ended meanwhile
    }
  }

  private void answer(String toAgent, String consumer, ProtocolMessage reply) {
    try {
      transport.notify(toAgent, ProtocolMessage.encode(reply));
    } catch (TransportException e) {
      counters.notificationFailed(consumer, reply.kind());
      // The consumer times out waiting and fails the load; the lease outcome stands. Its agent is
      // forgotten, so the transport stops trying to reach it; a consumer still alive handshakes
      // again once its loads time out.
      LOG.log(
          Level.WARNING,
          "could not answer "
              + consumer
              + " with "
              + reply.getClass().getSimpleName()
              + "; forgetting its agent until it handshakes again: "
              + e.getMessage());
      responder.forget(toAgent);
    }
  }

  private static RejectedInput toInput(Rejection rejection) {
    return switch (rejection) {
      case UNKNOWN_LEASE -> RejectedInput.UNKNOWN_LEASE;
      case WRONG_TOKEN -> RejectedInput.WRONG_TOKEN;
      case WRONG_BLOCKS -> RejectedInput.WRONG_BLOCKS;
      case NOT_CONFIRMED -> RejectedInput.NOT_CONFIRMED;
      case ALREADY_ENDED -> RejectedInput.LATE_OR_DUPLICATE;
      case EXPIRED -> RejectedInput.EXPIRED_COMPLETION;
    };
  }
}
