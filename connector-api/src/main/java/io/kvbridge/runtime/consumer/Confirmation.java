package io.kvbridge.runtime.consumer;

import io.kvbridge.integrity.ReadDigest;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.observe.TraceContext;
import io.kvbridge.observe.TransferSpans;
import io.kvbridge.runtime.engine.ConnectorCounters;
import io.kvbridge.runtime.engine.Ranks;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.InvalidTransferParamsException;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The first stage of a load on the consumer: checks a request's transfer parameters, handshakes
 * with the producer if needed, checks the parameters against the producer's layout, and confirms
 * the lease with it (CONFIRM, answered CONFIRMED or NACK) before a single byte is read; answers
 * {@code matchRemote} with pending, ready or unavailable. A producer already handshaken gets its
 * CONFIRM at once and the engine is answered ready in the same call, so it allocates while the
 * answer is on its way (a NACK then fails the load, reported by {@code getFinished}); otherwise the
 * engine is answered pending until CONFIRMED. A load that cannot be confirmed within {@code
 * handshake.timeout} + {@code reply-timeout} is refused (or, once answered ready, failed), and the
 * engine learns the reason at its next {@code matchRemote} (or {@code getFinished}).
 *
 * <p>A request whose every leased token the engine holds already (a full local prefix hit) is
 * answered ready with nothing to load at once; the lease is released on the producer as soon as it
 * is reachable.
 *
 * <p>Threads: confined to the connector's lock.
 */
final class Confirmation {

  private static final System.Logger LOG = System.getLogger(Confirmation.class.getName());

  /** How many refusals of loads still in confirmation are kept for the engine's next ask. */
  private static final int MAX_REFUSALS_KEPT = 65_536;

  private final ConnectorSettings settings;
  private final Ranks ranks;
  private final ConnectorCounters counters;
  private final LoadTable loads;
  private final HandshakeClient handshakes;
  private final List<Load> releasing = new ArrayList<>();
  private ProducerPeer lastShapePeer;
  private byte[] lastShapeDigest;
  private final Map<String, String> refusals =
      new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
          return size() > MAX_REFUSALS_KEPT;
        }
      };

  Confirmation(
      ConnectorSettings settings,
      Ranks ranks,
      ConnectorCounters counters,
      LoadTable loads,
      HandshakeClient handshakes) {
    this.settings = settings;
    this.ranks = ranks;
    this.counters = counters;
    this.loads = loads;
    this.handshakes = handshakes;
  }

  LoadMatch matchRemote(String requestId, TokenIds prompt, int localTokens, TransferParams params) {
    Optional<Load> existing = loads.get(requestId);
    if (existing.isPresent()) {
      Load load = existing.get();
      if (!load.params().equals(params)) {
        throw new InvalidTransferParamsException(
            "request " + requestId + " is already loading other transfer parameters");
      }
      return switch (load.state()) {
        case CONFIRMING -> LoadMatch.PENDING;
        case AWAITING_ALLOCATION ->
            new LoadMatch.Ready(load.effectiveSkip(), load.externalTokens());
        default ->
            throw new IllegalStateException(
                "request " + requestId + " already has its blocks; matchRemote comes before that");
      };
    }
    String refusal = refusals.remove(requestId);
    if (refusal != null) {
      return new LoadMatch.Unavailable(refusal);
    }
    check(requestId, prompt, params);
    if (loads.from(params.producerEngineId()) >= settings.maxLoadsPerProducer()) {
      String why =
          "producer "
              + params.producerEngineId()
              + " already has "
              + settings.maxLoadsPerProducer()
              + " loads on engine "
              + settings.engineId()
              + " (kvbridge.consumer.max-loads-per-producer)";
      counters.rejected(RejectedInput.OVER_PRODUCER_LIMIT, why);
      return new LoadMatch.Unavailable(why);
    }
    long now = settings.clock().nanoTime();
    int skipTokens = Math.max(0, Math.min(localTokens, prompt.size()));
    long deadline = now + settings.handshakeTimeout().toNanos() + settings.replyTimeout().toNanos();
    // Every token the lease holds is here already: nothing to read; free it on P.
    boolean fullLocalHit = skipTokens >= params.tokens();
    Load load =
        fullLocalHit
            ? Load.releasing(requestId, params, skipTokens, handshakes.epoch(), deadline)
            : new Load(requestId, params, skipTokens, handshakes.epoch(), deadline);
    if (params.traceContext() instanceof TraceContext.Ignored ignored) {
      counters.rejected(
          RejectedInput.MALFORMED_TRACE_CONTEXT, requestId + ": " + ignored.problem());
    }
    load.traced(
        settings.tracer().startLoad(requestId, params.producerEngineId(), params.traceContext()));
    load.startPhase(TransferSpans.LOAD_CONFIRM);
    if (fullLocalHit) {
      releasing.add(load);
      confirm(load, now);
      return new LoadMatch.Ready(params.tokens(), 0);
    }
    loads.add(load);
    confirm(load, now);
    if (load.state() == Load.State.CONFIRMING && load.confirmSent()) {
      // The producer was handshaken already and the CONFIRM is on its way: the engine allocates in
      // this step instead of the next; no READ is posted before CONFIRMED.
      load.answeredBeforeConfirmation();
      return new LoadMatch.Ready(load.effectiveSkip(), load.externalTokens());
    }
    return LoadMatch.PENDING;
  }

  /** Ends a load that still confirms: the engine learns why at its next {@code matchRemote}. */
  void refuse(Load load, String reason) {
    load.refused();
    loads.remove(load);
    load.failSpan("refused", reason);
    if (releasing.remove(load)) {
      LOG.log(Level.INFO, "lease of {0} not released: {1}", load.requestId(), reason);
      return;
    }
    refusals.put(load.requestId(), reason);
    counters.transferFailed(load.requestId(), reason);
    LOG.log(Level.WARNING, "load of {0} refused before allocation: {1}", load.requestId(), reason);
  }

  /** Forgets a refusal the engine will not ask about any more; whether there was one. */
  boolean forgetRefusal(String requestId) {
    return refusals.remove(requestId) != null;
  }

  /** Whether a release of a full local hit is still to be sent. */
  boolean releasing() {
    return !releasing.isEmpty();
  }

  /** Moves the releases of full local hits along: handshake, then release, within the deadline. */
  void progressReleases(long now) {
    for (Load load : List.copyOf(releasing)) {
      if (now >= load.stateDeadline()) {
        refuse(load, "producer " + load.params().producerEngineId() + " not reachable in time");
      } else {
        confirm(load, now);
      }
    }
  }

  /**
   * The digest of reading from {@code peer}'s shape into this engine's: the same for every load
   * from one handshake, so it is kept for the last peer (loads come from a few peers at a time).
   */
  private byte[] shapeDigest(ProducerPeer peer) {
    if (peer != lastShapePeer) {
      lastShapeDigest = ReadDigest.shape(peer.layouts(), ranks.layouts());
      lastShapePeer = peer;
    }
    return lastShapeDigest;
  }

  private void check(String requestId, TokenIds prompt, TransferParams params) {
    Optional<String> problem = LoadChecks.shapeProblem(params, prompt, ranks.layout(0));
    if (problem.isEmpty()
        && loads.reads(new Load.LeaseKey(params.producerEngineId(), params.requestId()))) {
      problem =
          Optional.of(
              "the lease of " + params.requestId() + " is already being loaded on this engine");
    }
    if (problem.isPresent()) {
      counters.rejected(RejectedInput.MALFORMED_TRANSFER_PARAMS, problem.get());
      throw new InvalidTransferParamsException(problem.get());
    }
    Optional<String> mismatch = LoadChecks.promptProblem(params, prompt);
    if (mismatch.isPresent()) {
      counters.rejected(RejectedInput.PROMPT_MISMATCH, requestId + ": " + mismatch.get());
      throw new InvalidTransferParamsException(mismatch.get());
    }
  }

  /**
   * Sends the load's CONFIRM (or, for a full local hit, its RELEASE) once its producer is
   * handshaken and the parameters fit the producer's layout; refuses it if either fails.
   */
  void confirm(Load load, long now) {
    if (load.confirmSent()) {
      return;
    }
    TransferParams p = load.params();
    Optional<String> address =
        p.handshakeAddress()
            .or(() -> settings.peerDirectory().handshakeAddress(p.producerEngineId()));
    if (address.isEmpty()) {
      refuse(
          load,
          "producer "
              + p.producerEngineId()
              + " has no handshake address: the transfer parameters name none and no peer"
              + " directory knows it");
      return;
    }
    HandshakeClient.Resolution resolution =
        handshakes.resolve(p.producerEngineId(), address.get(), p.producerIncarnation());
    if (resolution instanceof HandshakeClient.Resolution.Failed failed) {
      refuse(load, failed.reason());
    } else if (resolution instanceof HandshakeClient.Resolution.Ready ready) {
      ProducerPeer peer = ready.peer();
      Optional<String> unfit = LoadChecks.peerProblem(p, peer, ranks.layouts());
      if (unfit.isPresent()) {
        counters.rejected(
            RejectedInput.MALFORMED_TRANSFER_PARAMS, load.requestId() + ": " + unfit.get());
        refuse(load, unfit.get());
        return;
      }
      if (releasing.remove(load)) {
        load.released(peer, now);
        ConsumerReplies.sendRelease(
            ranks.lead(), settings.engineId(), counters, load, "every token is held locally");
        load.endSpan("local_hit");
        return;
      }
      int skip =
          TransferPlanner.effectiveSkip(
              peer.layouts().get(0).tokensPerBlock(),
              ranks.layout(0).tokensPerBlock(),
              p.tokens(),
              load.skipTokens());
      // Derived only from what this consumer verified: the lease's blocks and the prompt digest it
      // compared with its own prompt, the shapes both sides exchanged, and what it skips.
      load.confirmSent(
          peer,
          ReadDigest.of(
              ReadDigest.binding(p.requestId(), p.promptDigest(), p.tokens(), p.blockIds()),
              shapeDigest(peer),
              skip),
          skip,
          now);
      if (ConsumerReplies.sendConfirm(ranks.lead(), settings.engineId(), counters, load, now)) {
        load.phase().event(TransferSpans.CONFIRM_SENT);
      } else {
        handshakes.suspect(peer.engineId());
        refuse(load, "could not send the confirmation to " + peer.engineId());
      }
    }
  }
}
