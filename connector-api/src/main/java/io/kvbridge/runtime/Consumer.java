package io.kvbridge.runtime;

import io.kvbridge.integrity.ReadDigest;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.ConsumerStatus;
import io.kvbridge.spi.InvalidTransferParamsException;
import io.kvbridge.spi.KvLayout;
import io.kvbridge.spi.LoadFailure;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.LoadSpec;
import io.kvbridge.spi.PeerStatus;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * D's half of the pull protocol: takes a request's transfer parameters through the {@linkplain Load
 * load state machine}: confirms the lease with the producer before any block is committed, posts
 * the read when the engine lent its blocks, checks what arrived, and reports the request received
 * only after P's ACK. Replies from producers are handled by {@link ConsumerReplies}; heartbeats by
 * {@link Heartbeats}.
 *
 * <p>Threads: every method runs under the connector's lock; handshakes run on the {@link
 * HandshakeClient}'s threads.
 */
final class Consumer {

  private static final System.Logger LOG = System.getLogger(Consumer.class.getName());

  /** How many refusals of loads still in confirmation are kept for the engine's next ask. */
  private static final int MAX_REFUSALS_KEPT = 65_536;

  private final ConnectorSettings settings;
  private final Transport transport;
  private final ConnectorCounters counters;
  private final LoadTable loads = new LoadTable();
  private final HandshakeClient handshakes;
  private final Heartbeats heartbeats;
  private final Set<String> received = new HashSet<>();
  private final List<LoadFailure> failures = new ArrayList<>();
  private final Map<String, String> refusals =
      new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
          return size() > MAX_REFUSALS_KEPT;
        }
      };
  private volatile KvMemory memory;
  private volatile KvLayout layout;

  Consumer(ConnectorSettings settings, Transport transport, ConnectorCounters counters) {
    this.settings = settings;
    this.transport = transport;
    this.counters = counters;
    this.handshakes = new HandshakeClient(settings, transport, counters, this::requireLayout);
    this.heartbeats = new Heartbeats(settings, transport, loads);
  }

  void start(KvMemory kvMemory, KvLayout kvLayout) {
    this.memory = kvMemory;
    this.layout = kvLayout;
  }

  LoadTable loads() {
    return loads;
  }

  HandshakeClient handshakes() {
    return handshakes;
  }

  Heartbeats heartbeats() {
    return heartbeats;
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
            requireLayout().blockBytes(),
            params.blockIds());
    Load load =
        new Load(
            requestId,
            params,
            digest,
            now + settings.handshakeTimeout().toNanos() + settings.replyTimeout().toNanos());
    loads.add(load);
    confirm(load, now);
    return LoadMatch.PENDING;
  }

  void afterAllocate(String requestId, List<Integer> localBlockIds) {
    Load load =
        loads
            .get(requestId)
            .filter(l -> l.state() == Load.State.AWAITING_ALLOCATION)
            .orElseThrow(
                () ->
                    new IllegalStateException(
                        "afterAllocate for "
                            + requestId
                            + " without a matchRemote that answered Ready"));
    int needed = load.params.blockIds().size();
    if (localBlockIds.size() < needed) {
      fail(
          load,
          localBlockIds,
          "engine allocated " + localBlockIds.size() + " blocks, the load needs " + needed);
      return;
    }
    load.localBlocks = List.copyOf(localBlockIds.subList(0, needed));
    load.moveTo(Load.State.READY, Long.MAX_VALUE);
  }

  /** The loads whose blocks the engine lent since the last call, for {@code startLoad}. */
  List<LoadSpec> drainReady() {
    List<LoadSpec> ready = new ArrayList<>();
    for (Load load : loads.all()) {
      if (load.state() == Load.State.READY && load.handle == null) {
        ready.add(new LoadSpec(load.requestId, load.params, load.localBlocks));
      }
    }
    return ready;
  }

  /**
   * Checks the lease against the safety margin and posts the read; a load that cannot is failed.
   */
  void post(LoadSpec spec) {
    Optional<Load> found = loads.get(spec.requestId()).filter(l -> l.state() == Load.State.READY);
    if (found.isEmpty()) {
      return; // cancelled or failed since the step's metadata was built
    }
    Load load = found.get();
    long now = settings.clock().nanoTime();
    long left = load.localLeaseDeadline() - now;
    if (left < settings.safetyMargin().toNanos()) {
      fail(
          load,
          "lease ends in "
              + Math.max(0, left / 1_000_000)
              + " ms, inside the safety margin of "
              + settings.safetyMargin().toMillis()
              + " ms; not reading");
      return;
    }
    ReadPlanner.Plan plan =
        ReadPlanner.plan(memory, layout, load.localBlocks, load.peer, load.params.blockIds());
    try {
      load.handle =
          transport.post(
              TransferOp.READ,
              plan.local(),
              load.peer.agentName(),
              plan.remote(),
              Optional.empty());
    } catch (TransportException | IllegalArgumentException e) {
      handshakes.suspect(load.peer.engineId());
      fail(load, "read could not be posted: " + e.getMessage());
      return;
    }
    load.readStartedAt = now;
    load.moveTo(Load.State.READING, load.localLeaseDeadline());
  }

  /**
   * Moves every load as far as it can go now: confirmations after handshakes, reads that finished,
   * timeouts; then sends the heartbeats that are due.
   */
  void progress() {
    long now = settings.clock().nanoTime();
    for (Load load : loads.all()) {
      Optional<String> restarted = restartOf(load);
      switch (load.state()) {
        case CONFIRMING -> {
          if (now >= load.stateDeadline()) {
            handshakes.suspect(load.params.producerEngineId());
            refuse(
                load,
                "producer "
                    + load.params.producerEngineId()
                    + " did not confirm the lease within "
                    + (settings.handshakeTimeout().toMillis() + settings.replyTimeout().toMillis())
                    + " ms");
          } else {
            confirm(load, now);
          }
        }
        case READY -> restarted.ifPresent(why -> fail(load, why));
        case READING -> {
          if (restarted.isPresent()) {
            fail(load, restarted.get());
          } else {
            pollRead(load, now);
          }
        }
        case AWAITING_REPLY -> {
          if (now >= load.stateDeadline()) {
            handshakes.suspect(load.peer.engineId());
            fail(
                load,
                "no ACK from producer "
                    + load.peer.engineId()
                    + " within "
                    + settings.replyTimeout().toMillis()
                    + " ms");
          }
        }
        case AWAITING_ALLOCATION -> {
          // The engine allocates in the step that saw Ready; a restart is reported then.
        }
      }
    }
    handshakes.endRound();
    heartbeats.sendIfDue(now);
  }

  /**
   * Cancels a load the engine gave up on: it leaves every queue, its read is released (no byte
   * lands after this returns), and its producer is told to release the lease.
   */
  boolean cancel(String requestId, String why) {
    if (refusals.remove(requestId) != null) {
      return true;
    }
    Optional<Load> found = loads.get(requestId);
    if (found.isEmpty()) {
      return false;
    }
    Load load = found.get();
    loads.remove(load);
    releaseRead(load);
    if (load.peer != null && load.state() != Load.State.AWAITING_REPLY) {
      ConsumerReplies.sendRelease(transport, settings.engineId(), load, "cancelled on D: " + why);
    }
    LOG.log(Level.INFO, "load of {0} cancelled: {1}", requestId, why);
    return true;
  }

  Set<String> drainReceived() {
    Set<String> out = Set.copyOf(received);
    received.clear();
    return out;
  }

  List<LoadFailure> drainFailures() {
    List<LoadFailure> out = List.copyOf(failures);
    failures.clear();
    return out;
  }

  int inFlight() {
    return loads.size();
  }

  /** The consumer's part of the connector's status. */
  ConsumerStatus status() {
    return new ConsumerStatus(
        inFlight(),
        counters.readsCompleted(),
        counters.bytesRead(),
        counters.loadsFailed(),
        counters.renewalsConfirmed(),
        handshakes.peers().values().stream()
            .map(ProducerPeer::status)
            .sorted(Comparator.comparing(PeerStatus::engineId))
            .toList());
  }

  void close() {
    for (Load load : loads.all()) {
      if (load.state() == Load.State.CONFIRMING || load.state() == Load.State.AWAITING_ALLOCATION) {
        loads.remove(load);
      } else {
        fail(load, "connector closed");
      }
    }
    handshakes.close();
  }

  /** The load was confirmed by its producer: the engine may allocate. */
  void confirmed(Load load, long producerDeadline) {
    load.producerDeadline = Math.max(load.producerDeadline, producerDeadline);
    load.moveTo(Load.State.AWAITING_ALLOCATION, Long.MAX_VALUE);
  }

  /** The read was validated by P: the request is received. */
  void receivedAfterAck(Load load) {
    loads.remove(load);
    received.add(load.requestId);
    counters.transferCompleted(
        load.requestId,
        (long) load.localBlocks.size() * layout.blockBytes(),
        settings.clock().nanoTime() - load.readStartedAt);
  }

  /** Ends a load that still confirms: the engine learns it at its next {@code matchRemote}. */
  void refuse(Load load, String reason) {
    loads.remove(load);
    refusals.put(load.requestId, reason);
    counters.transferFailed(load.requestId, reason);
    LOG.log(Level.WARNING, "load of {0} refused before allocation: {1}", load.requestId, reason);
  }

  /** Ends a load whose blocks the engine lent, releasing its read if one is posted. */
  void fail(Load load, String reason) {
    releaseRead(load);
    fail(load, load.localBlocks, reason);
  }

  private void fail(Load load, List<Integer> blocks, String reason) {
    loads.remove(load);
    LOG.log(Level.WARNING, "load of {0} failed: {1}", load.requestId, reason);
    counters.transferFailed(load.requestId, reason);
    failures.add(new LoadFailure(load.requestId, blocks, reason));
  }

  private void check(String requestId, TokenIds prompt, TransferParams params) {
    KvLayout kv = requireLayout();
    String problem = null;
    if (params.tokens() > prompt.size()) {
      problem = "tokens " + params.tokens() + " exceed the prompt's " + prompt.size();
    } else if ((long) params.blockIds().size() * kv.tokensPerBlock() != params.tokens()) {
      problem =
          params.blockIds().size()
              + " blocks of "
              + kv.tokensPerBlock()
              + " tokens cannot hold "
              + params.tokens()
              + " tokens";
    } else if (params.blockIds().size() > kv.blockCount()) {
      problem =
          params.blockIds().size() + " blocks exceed this engine's pool of " + kv.blockCount();
    } else if (loads.reads(new Load.LeaseKey(params.producerEngineId(), params.requestId()))) {
      problem = "the lease of " + params.requestId() + " is already being loaded on this engine";
    }
    if (problem != null) {
      counters.rejected(RejectedInput.MALFORMED_TRANSFER_PARAMS, problem);
      throw new InvalidTransferParamsException(problem);
    }
    if (!prompt.digest(params.tokens()).equals(params.promptDigest())) {
      String why =
          "prompt_digest is not the digest of this request's first "
              + params.tokens()
              + " prompt tokens: the parameters belong to another prompt";
      counters.rejected(RejectedInput.PROMPT_MISMATCH, requestId + ": " + why);
      throw new InvalidTransferParamsException(why);
    }
  }

  /** Sends the load's Confirm once its producer is handshaken; refuses it if that failed. */
  private void confirm(Load load, long now) {
    if (load.confirmSentAt != Long.MIN_VALUE) {
      return;
    }
    TransferParams p = load.params;
    HandshakeClient.Resolution resolution =
        handshakes.resolve(p.producerEngineId(), p.handshakeAddress(), p.producerIncarnation());
    if (resolution instanceof HandshakeClient.Resolution.Failed failed) {
      refuse(load, failed.reason());
    } else if (resolution instanceof HandshakeClient.Resolution.Ready ready) {
      ProducerPeer peer = ready.peer();
      for (int id : p.blockIds()) {
        if (id >= peer.blockCount()) {
          String why =
              "block id "
                  + id
                  + " is outside the producer's pool of "
                  + peer.blockCount()
                  + " blocks";
          counters.rejected(RejectedInput.MALFORMED_TRANSFER_PARAMS, load.requestId + ": " + why);
          refuse(load, why);
          return;
        }
      }
      load.peer = peer;
      load.confirmSentAt = now;
      if (!ConsumerReplies.sendConfirm(transport, settings.engineId(), load, now)) {
        handshakes.suspect(peer.engineId());
        refuse(load, "could not send the confirmation to " + peer.engineId());
      }
    }
  }

  private void pollRead(Load load, long now) {
    TransferStatus status;
    try {
      status = transport.status(load.handle);
    } catch (TransportException e) {
      status = new TransferStatus.Failed(e.getMessage());
    }
    if (status instanceof TransferStatus.Done) {
      releaseRead(load);
      Optional<String> corrupt = checkContent(load);
      if (corrupt.isPresent()) {
        counters.rejected(RejectedInput.CHECKSUM_MISMATCH, load.requestId + ": " + corrupt.get());
        fail(load, corrupt.get() + "; not using the read");
      } else if (ConsumerReplies.sendCompletion(transport, settings.engineId(), load)) {
        load.moveTo(Load.State.AWAITING_REPLY, now + settings.replyTimeout().toNanos());
      } else {
        handshakes.suspect(load.peer.engineId());
        fail(load, "could not send the completion to " + load.peer.engineId());
      }
    } else if (status instanceof TransferStatus.Failed failed) {
      handshakes.suspect(load.peer.engineId());
      fail(load, "read failed: " + failed.reason());
    } else if (now >= load.stateDeadline()) {
      fail(load, "read did not finish before the lease deadline; its bytes are not trusted");
    }
  }

  /** Compares each block read with the checksum P recorded at grant; names the first mismatch. */
  private Optional<String> checkContent(Load load) {
    TransferParams p = load.params;
    int blockBytes = layout.blockBytes();
    for (int i = 0; i < p.blockIds().size(); i++) {
      int actual =
          p.checksumScheme()
              .checksum(memory, (long) load.localBlocks.get(i) * blockBytes, blockBytes);
      int expected = p.blockChecksums().get(i);
      if (actual != expected) {
        return Optional.of(
            "block "
                + p.blockIds().get(i)
                + " of producer "
                + p.producerEngineId()
                + " arrived with "
                + p.checksumScheme().wireName()
                + " "
                + Integer.toHexString(actual)
                + ", the lease recorded "
                + Integer.toHexString(expected));
      }
    }
    return Optional.empty();
  }

  /** Why a load can no longer trust its producer: it restarted after the load chose it. */
  private Optional<String> restartOf(Load load) {
    if (load.peer == null) {
      return Optional.empty();
    }
    return handshakes
        .current(load.peer.engineId())
        .filter(now -> now.incarnation() != load.peer.incarnation())
        .map(
            now ->
                "producer "
                    + now.engineId()
                    + " restarted (incarnation "
                    + Long.toHexString(load.peer.incarnation())
                    + " is gone); its lease ended with it");
  }

  private void releaseRead(Load load) {
    TransferHandle handle = load.handle;
    if (handle == null) {
      return;
    }
    load.handle = null;
    try {
      transport.release(handle);
    } catch (TransportException e) {
      LOG.log(Level.WARNING, "releasing the read of " + load.requestId + ": " + e.getMessage());
    }
  }

  private KvLayout requireLayout() {
    KvLayout kv = layout;
    if (kv == null) {
      throw new IllegalStateException("registerKvCache must be called before loading");
    }
    return kv;
  }
}
