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
  private volatile HandshakeResponder responder;
  private volatile HandshakeChannel.Server server;

  public Producer(ConnectorSettings settings, Ranks ranks, ConnectorCounters counters) {
    this.settings = settings;
    this.ranks = ranks;
    this.transport = ranks.lead();
    this.counters = counters;
    this.ends = new LeaseEnds(counters);
    this.leases = new LeaseTable(settings.clock(), settings.leaseTerms(), ends);
  }

  /** Starts answering handshakes, once every rank registered its KV cache. */
  public void start() throws IOException {
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

  public FinishDecision requestFinished(FinishedRequest request) {
    if (request.aborted() || !request.remoteDecode() || server == null) {
      return FinishDecision.freeNow();
    }
    int perBlock = ranks.layout(0).tokensPerBlock();
    int tokens = Math.min(request.computedTokens(), request.blockIds().size() * perBlock);
    if (tokens == 0) {
      return FinishDecision.freeNow();
    }
    TransferSpan span = settings.tracer().startLease(request.requestId());
    TransferSpan grant = span.startChild(TransferSpans.LEASE_GRANT);
    // Every block holding a computed token, the partly filled tail included.
    List<Integer> blocks = request.blockIds().subList(0, (tokens + perBlock - 1) / perBlock);
    String promptDigest = request.prompt().digest(tokens);
    // Fingerprinted before the grant: from here on the blocks belong to the lease, and the engine
    // does not write them until doneSending names the request.
    ChecksumScheme scheme = ChecksumScheme.forMemory(ranks.memory(0).kind());
    List<List<Integer>> checksums = new ArrayList<>(ranks.count());
    for (int rank = 0; rank < ranks.count(); rank++) {
      checksums.add(BlockChecksums.of(scheme, ranks.memory(rank), blocks, tokens));
    }
    Lease lease;
    try {
      lease =
          leases.grant(
              request.requestId(),
              blocks,
              settings.acksRequired(),
              ReadDigest.binding(request.requestId(), promptDigest, tokens, blocks));
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
      ends.traced(request.requestId(), span);
      if (!leases.isLive(request.requestId())) {
        ends.endedBeforeTraced(request.requestId(), span);
      }
    }
    return FinishDecision.holdFor(
        new TransferParams(
            settings.engineId(),
            settings.incarnation(),
            request.requestId(),
            blocks,
            tokens,
            promptDigest,
            lease.token().value(),
            lease.deadlineNanos(),
            Optional.of(server.address().toString()),
            scheme,
            checksums,
            span.context()));
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

  /** The requests whose leases ended since the last call, for {@code doneSending}. */
  public Set<String> drainEnded() {
    return ends.drainEnded();
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
    leases.revokeAll("connector closed");
  }

  private void onCompletion(String fromAgent, String consumer, ProtocolMessage.Completion c) {
    LeaseRef ref = c.lease();
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
