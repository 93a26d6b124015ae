package io.kvbridge.runtime;

import io.kvbridge.integrity.ReadDigest;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.InvalidTransferParamsException;
import io.kvbridge.spi.KvLayout;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.transfer.Transport;
import java.lang.System.Logger.Level;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The first stage of a load on the consumer: checks a request's transfer parameters, handshakes
 * with the producer if needed, and confirms the lease with it (CONFIRM, answered CONFIRMED or NACK)
 * before the engine commits a single block; answers {@code matchRemote} with pending, ready or
 * unavailable. A load that cannot be confirmed within {@code handshake.timeout} + {@code
 * reply-timeout} is refused, and the engine learns the reason at its next {@code matchRemote}.
 *
 * <p>Threads: confined to the connector's lock.
 */
final class Admission {

  private static final System.Logger LOG = System.getLogger(Admission.class.getName());

  /** How many refusals of loads still in confirmation are kept for the engine's next ask. */
  private static final int MAX_REFUSALS_KEPT = 65_536;

  private final ConnectorSettings settings;
  private final Transport transport;
  private final ConnectorCounters counters;
  private final LoadTable loads;
  private final HandshakeClient handshakes;
  private final Supplier<KvLayout> layout;
  private final Map<String, String> refusals =
      new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
          return size() > MAX_REFUSALS_KEPT;
        }
      };

  Admission(
      ConnectorSettings settings,
      Transport transport,
      ConnectorCounters counters,
      LoadTable loads,
      HandshakeClient handshakes,
      Supplier<KvLayout> layout) {
    this.settings = settings;
    this.transport = transport;
    this.counters = counters;
    this.loads = loads;
    this.handshakes = handshakes;
    this.layout = layout;
  }

  LoadMatch matchRemote(String requestId, TokenIds prompt, TransferParams params) {
    Optional<Load> existing = loads.get(requestId);
    if (existing.isPresent()) {
      Load load = existing.get();
      if (!load.params.equals(params)) {
        throw new InvalidTransferParamsException(
            "request " + requestId + " is already loading other transfer parameters");
      }
      return switch (load.state()) {
        case CONFIRMING -> LoadMatch.PENDING;
        case AWAITING_ALLOCATION -> new LoadMatch.Ready(params.tokens());
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
    // The digest is derived from what this consumer verified: the block ids P checks against the
    // lease, and the prompt digest just compared with this request's own prompt.
    ReadDigest digest =
        ReadDigest.of(
            params.requestId(),
            params.promptDigest(),
            layout.get().blockBytes(),
            params.blockIds());
    Load load =
        new Load(
            requestId,
            params,
            digest,
            handshakes.epoch(),
            now + settings.handshakeTimeout().toNanos() + settings.replyTimeout().toNanos());
    loads.add(load);
    confirm(load, now);
    return LoadMatch.PENDING;
  }

  /** Ends a load that still confirms: the engine learns why at its next {@code matchRemote}. */
  void refuse(Load load, String reason) {
    loads.remove(load);
    refusals.put(load.requestId, reason);
    counters.transferFailed(load.requestId, reason);
    LOG.log(Level.WARNING, "load of {0} refused before allocation: {1}", load.requestId, reason);
  }

  /** Forgets a refusal the engine will not ask about any more; whether there was one. */
  boolean forgetRefusal(String requestId) {
    return refusals.remove(requestId) != null;
  }

  private void check(String requestId, TokenIds prompt, TransferParams params) {
    Optional<String> problem = LoadChecks.shapeProblem(params, prompt, layout.get());
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

  /** Sends the load's Confirm once its producer is handshaken; refuses it if that failed. */
  void confirm(Load load, long now) {
    if (load.confirmSentAt != Long.MIN_VALUE) {
      return;
    }
    TransferParams p = load.params;
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
      Optional<String> outside = LoadChecks.blockOutsidePool(p, peer.blockCount());
      if (outside.isPresent()) {
        counters.rejected(
            RejectedInput.MALFORMED_TRANSFER_PARAMS, load.requestId + ": " + outside.get());
        refuse(load, outside.get());
        return;
      }
      load.peer = peer;
      load.confirmSentAt = now;
      if (!ConsumerReplies.sendConfirm(transport, settings.engineId(), load, now)) {
        handshakes.suspect(peer.engineId());
        refuse(load, "could not send the confirmation to " + peer.engineId());
      }
    }
  }
}
