package io.kvbridge.runtime.consumer;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.observe.TransferSpans;
import io.kvbridge.runtime.engine.ConnectorCounters;
import io.kvbridge.runtime.engine.Ranks;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.ConsumerStatus;
import io.kvbridge.spi.LoadFailure;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.LoadSpec;
import io.kvbridge.spi.PeerStatus;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.TransportException;
import io.kvbridge.wire.ProtocolMessage;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * D's half of the pull protocol: takes a request's transfer parameters through the {@linkplain Load
 * load state machine}: confirms the lease with the producer before any byte is read, posts the read
 * when the engine lent its blocks, checks what arrived, and reports the request received only after
 * P's ACK. The first stage (parameters, handshake, confirmation) is {@link Confirmation}; replies
 * from producers are handled by {@link ConsumerReplies}; heartbeats by {@link Heartbeats}; the
 * reads themselves are posted, polled and released by {@link LoadReads}.
 *
 * <p>Threads: every method runs under the connector's lock; handshakes run on the {@link
 * HandshakeClient}'s threads.
 */
public final class Consumer {

  private static final System.Logger LOG = System.getLogger(Consumer.class.getName());

  private final ConnectorSettings settings;
  private final Ranks ranks;
  private final ConnectorCounters counters;
  private final LoadTable loads = new LoadTable();
  private final HandshakeClient handshakes;
  private final Heartbeats heartbeats;
  private final Set<String> received = new HashSet<>();
  private final List<LoadFailure> failures = new ArrayList<>();

  /** Loads answered ready that failed before the engine's {@code afterAllocate}, until it comes. */
  private final Set<String> failedAwaitingAllocation = new HashSet<>();

  private final Confirmation confirmation;
  private final LoadReads reads;
  private volatile boolean started;

  public Consumer(ConnectorSettings settings, Ranks ranks, ConnectorCounters counters) {
    this(settings, ranks, counters, ReadPlan.MIN_STAGE_BYTES);
  }

  /** A consumer whose reads are staged by {@code minStageBytes} ({@link LoadReads#post}). */
  Consumer(
      ConnectorSettings settings, Ranks ranks, ConnectorCounters counters, long minStageBytes) {
    this.settings = settings;
    this.ranks = ranks;
    this.counters = counters;
    this.handshakes = new HandshakeClient(settings, ranks, counters);
    this.heartbeats = new Heartbeats(settings, ranks.lead(), loads, counters);
    this.confirmation = new Confirmation(settings, ranks, counters, loads, handshakes);
    this.reads = new LoadReads(ranks, counters, minStageBytes, settings.staging());
  }

  /** Starts loading, once every rank registered its KV cache. */
  public void start() {
    started = true;
  }

  public LoadMatch matchRemote(
      String requestId, TokenIds prompt, int localTokens, TransferParams params) {
    if (!started) {
      throw new IllegalStateException(
          "every rank must register its KV cache (registerKvCache) before loading");
    }
    return confirmation.matchRemote(requestId, prompt, localTokens, params);
  }

  /** Ends a load that still confirms: the engine learns it at its next {@code matchRemote}. */
  void refuse(Load load, String reason) {
    confirmation.refuse(load, reason);
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

  /**
   * Forgets producer {@code engineId}, which is known to be gone: its metadata is dropped and the
   * loads tied to it fail.
   */
  public void producerGone(String engineId, String why) {
    handshakes.producerGone(engineId, why);
  }

  public void afterAllocate(String requestId, List<Integer> localBlockIds) {
    if (failedAwaitingAllocation.remove(requestId)) {
      // Failed between the answer and the allocation (a NACK, a lost producer): the failure is
      // reported by the next getFinished, and no byte was read into the blocks.
      return;
    }
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
    int perBlock = ranks.layout(0).tokensPerBlock();
    int needed = (load.params().tokens() + perBlock - 1) / perBlock;
    if (localBlockIds.size() < needed) {
      fail(
          load,
          List.of(),
          "engine allocated " + localBlockIds.size() + " blocks, the load needs " + needed);
      return;
    }
    load.allocated(localBlockIds.subList(0, needed));
  }

  /** The loads whose blocks the engine lent since the last call, for {@code startLoad}. */
  public List<LoadSpec> drainReady() {
    List<LoadSpec> ready = new ArrayList<>();
    for (Load load : loads.all()) {
      if (load.state() == Load.State.READY && !load.isStartAsked()) {
        ready.add(new LoadSpec(load.requestId(), load.params(), load.localBlocks()));
      }
    }
    return ready;
  }

  /**
   * Checks the lease against the safety margin and posts the read; a load that cannot is failed.
   */
  public void post(LoadSpec spec) {
    Optional<Load> found = loads.get(spec.requestId()).filter(l -> l.state() == Load.State.READY);
    if (found.isEmpty()) {
      return; // cancelled or failed since the step's metadata was built
    }
    Load load = found.get();
    if (!load.isConfirmed()) {
      load.startAsked(); // posted as soon as P confirms the lease
      return;
    }
    post(load);
  }

  /** Posts the read of a confirmed load the engine lent its blocks and asked to start. */
  private void post(Load load) {
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
    TransferPlanner.Request plan = reads.plan(load);
    Load.Posting posting;
    load.startPhase(TransferSpans.LOAD_READ);
    try {
      posting = reads.post(load, plan);
    } catch (TransportException | IllegalArgumentException e) {
      handshakes.suspect(load.peer().engineId());
      fail(load, "read could not be posted: " + e.getMessage());
      return;
    }
    long posted = settings.clock().nanoTime();
    load.phase().tag(TransferSpans.BLOCKS, load.localBlocks().size());
    load.phase().tag(TransferSpans.BYTES, posting.bytes());
    load.phase().tag(TransferSpans.DESCRIPTORS, posting.descriptors());
    load.phase().event(TransferSpans.POSTED);
    counters.readPosted(load.requestId(), posting.descriptors(), posting.bytes(), posted - now);
    load.posted(plan, posting, now, load.localLeaseDeadline());
  }

  /**
   * Moves every load as far as it can go now: confirmations after handshakes, reads that finished,
   * timeouts; then sends the heartbeats that are due.
   */
  public void progress() {
    long now = settings.clock().nanoTime();
    confirmation.progressReleases(now);
    for (Load load : loads.all()) {

      Optional<String> lost = lostProducer(load);
      switch (load.state()) {
        case CONFIRMING -> {
          if (lost.isPresent()) {
            refuse(load, lost.get());
          } else if (now >= load.stateDeadline()) {
            handshakes.suspect(load.params().producerEngineId());
            refuse(load, notConfirmedInTime(load));
          } else {
            confirmation.confirm(load, now);
          }
        }
        case AWAITING_ALLOCATION, READY -> {
          if (lost.isPresent()) {
            fail(load, lost.get());
          } else if (!load.isConfirmed() && now >= load.stateDeadline()) {
            handshakes.suspect(load.params().producerEngineId());
            fail(load, notConfirmedInTime(load));
          }
        }
        case READING -> {
          if (lost.isPresent()) {
            fail(load, lost.get());
          } else {
            pollRead(load, now);
          }
        }
        case AWAITING_REPLY -> {
          if (lost.isPresent()) {
            fail(load, lost.get());
          } else if (now >= load.stateDeadline()) {
            handshakes.suspect(load.peer().engineId());
            fail(
                load,
                "no ACK from producer "
                    + load.peer().engineId()
                    + " within "
                    + settings.replyTimeout().toMillis()
                    + " ms");
          }
        }
        case RELEASING, REFUSED, RECEIVED, FAILED, CANCELLED, RELEASED ->
            throw new IllegalStateException(
                "load of " + load.requestId() + " is " + load.state() + " but still listed");
      }
    }
    handshakes.endRound();
    handshakes.forgetGoneAtOrBefore(
        loads.all().stream().mapToLong(Load::epoch).min().orElse(handshakes.epoch()));
    heartbeats.sendIfDue(now);
  }

  private String notConfirmedInTime(Load load) {
    return "producer "
        + load.params().producerEngineId()
        + " did not confirm the lease within "
        + (settings.handshakeTimeout().toMillis() + settings.replyTimeout().toMillis())
        + " ms";
  }

  /**
   * Cancels a load the engine gave up on: it leaves every queue, its read is released (no byte
   * lands after this returns), and its producer is told to release the lease.
   */
  public boolean cancel(String requestId, String why) {
    if (confirmation.forgetRefusal(requestId)) {
      return true;
    }
    Optional<Load> found = loads.get(requestId);
    if (found.isEmpty()) {
      return false;
    }
    Load load = found.get();
    boolean release = load.hasPeer() && load.state() != Load.State.AWAITING_REPLY;
    load.cancelled();
    loads.remove(load);
    reads.release(load);
    load.endSpan("cancelled");
    if (release) {
      ConsumerReplies.sendRelease(
          ranks.lead(), settings.engineId(), counters, load, "cancelled on D: " + why);
    }
    LOG.log(Level.INFO, "load of {0} cancelled: {1}", requestId, why);
    return true;
  }

  public Set<String> drainReceived() {
    Set<String> out = Set.copyOf(received);
    received.clear();
    return out;
  }

  public List<LoadFailure> drainFailures() {
    List<LoadFailure> out = List.copyOf(failures);
    failures.clear();
    // The engine allocates in the step that was answered ready, before it asks what finished.
    failedAwaitingAllocation.clear();
    return out;
  }

  int inFlight() {
    return loads.size();
  }

  /** Whether any load (or release of a full local hit) is still moving. */
  public boolean busy() {
    return loads.size() > 0 || confirmation.releasing();
  }

  /** The consumer's part of the connector's status. */
  public ConsumerStatus status() {
    return new ConsumerStatus(
        inFlight(),
        counters.readsCompleted(),
        counters.bytesRead(),
        counters.loadsFailed(),
        counters.renewalsConfirmed(),
        reads.stagingBytesInUse(),
        handshakes.peers().values().stream()
            .map(ProducerPeer::status)
            .sorted(Comparator.comparing(PeerStatus::engineId))
            .toList());
  }

  /**
   * Ends every load: each is removed (or failed, if the engine lent it blocks), and each lease this
   * consumer confirmed and has not completed is released on its producer, so a consumer that shuts
   * down gives the blocks back at once instead of letting them wait for expiry.
   */
  public void close() {
    for (Load load : loads.all()) {
      boolean release = load.hasPeer() && load.state() != Load.State.AWAITING_REPLY;
      if (load.state() == Load.State.CONFIRMING || load.state() == Load.State.AWAITING_ALLOCATION) {
        load.cancelled();
        loads.remove(load);
        load.endSpan("closed");
      } else {
        fail(load, "connector closed");
      }
      if (release) {
        ConsumerReplies.sendRelease(
            ranks.lead(),
            settings.engineId(),
            counters,
            load,
            "consumer " + settings.engineId() + " closed");
      }
    }
    handshakes.close();
    reads.close();
  }

  /**
   * The load was confirmed by its producer: the engine may allocate, or, if it lent its blocks and
   * asked for the read already, the read is posted now.
   */
  void confirmed(Load load, long producerDeadline) {
    load.confirmed(producerDeadline);
    counters.leaseConfirmed(load.requestId(), settings.clock().nanoTime() - load.confirmSentAt());
    if (load.state() == Load.State.READY && load.isStartAsked()) {
      post(load);
    }
  }

  /**
   * The producer of a streamed load announced more of its layers: they are recorded and, if the
   * load reads already, read at once. Layers announced twice, out of turn, beyond the model, or of
   * other ranks or blocks than the lease's are refused and counted, changing nothing.
   */
  void layersAnnounced(Load load, ProtocolMessage.Layers layers) {
    String what =
        "layers " + layers.fromLayer() + " to " + layers.toLayer() + " of " + load.requestId();
    if (!load.params().streamed()) {
      counters.rejected(RejectedInput.UNEXPECTED_REPLY, what + ", whose lease is not streamed");
      return;
    }
    List<KvLayout> producer = load.peer().layouts();
    if (layers.fromLayer() < load.layersAnnounced()) {
      counters.rejected(
          RejectedInput.LAYERS_DUPLICATE,
          what + ": layers to " + load.layersAnnounced() + " were announced already");
      return;
    }
    if (layers.fromLayer() > load.layersAnnounced()) {
      counters.rejected(
          RejectedInput.LAYERS_OUT_OF_ORDER,
          what + ": layer " + load.layersAnnounced() + " comes first");
      return;
    }
    if (layers.toLayer() > producer.get(0).layers()
        || layers.checksums().size() != producer.size()
        || layers.checksums().get(0).get(0).size() != load.params().blockIds().size()) {
      counters.rejected(
          RejectedInput.LAYERS_BEYOND_MODEL,
          what
              + ": the model has "
              + producer.get(0).layers()
              + " layers, its producer "
              + producer.size()
              + " ranks, the lease "
              + load.params().blockIds().size()
              + " blocks");
      return;
    }
    load.announced(layers);
    if (load.state() == Load.State.READING) {
      try {
        reads.postLayers(load, new TransferPlanner.Layers(layers.fromLayer(), layers.toLayer()));
      } catch (TransportException | IllegalArgumentException e) {
        handshakes.suspect(load.peer().engineId());
        fail(load, "read could not be posted: " + e.getMessage());
      }
    }
  }

  /** The read was validated by P: the request is received. */
  void receivedAfterAck(Load load) {
    load.received();
    loads.remove(load);
    received.add(load.requestId());
    load.phase().tag(TransferSpans.REPLY, "ack");
    load.endSpan("received");
    counters.transferCompleted(
        load.requestId(), load.bytes(), settings.clock().nanoTime() - load.readStartedAt());
  }

  /** Ends a load whose blocks the engine lent, releasing its read if one is posted. */
  void fail(Load load, String reason) {
    reads.release(load);
    // Blocks below the first token read were never a destination: the engine keeps what it had.
    int firstWritten = load.effectiveSkip() / ranks.layout(0).tokensPerBlock();
    List<Integer> blocks = load.localBlocks();
    fail(load, blocks.subList(Math.min(firstWritten, blocks.size()), blocks.size()), reason);
  }

  private void fail(Load load, List<Integer> blocks, String reason) {
    if (load.state() == Load.State.AWAITING_ALLOCATION) {
      failedAwaitingAllocation.add(load.requestId());
    }
    load.failed();
    loads.remove(load);
    LOG.log(Level.WARNING, "load of {0} failed: {1}", load.requestId(), reason);
    load.failSpan("failed", reason);
    counters.transferFailed(load.requestId(), reason);
    failures.add(new LoadFailure(load.requestId(), blocks, reason));
  }

  private void pollRead(Load load, long now) {
    TransferStatus status = reads.status(load);
    if (status instanceof TransferStatus.Failed failed) {
      readFailed(load, failed);
      return;
    }
    if (!checkStages(load)) {
      return;
    }
    if (!(status instanceof TransferStatus.Done)) {
      // READs that finished since the first look: their stages are checked now, and the load
      // moves on in this round, not the next.
      status = reads.status(load);
      if (status instanceof TransferStatus.Failed failed) {
        readFailed(load, failed);
        return;
      }
      if (status instanceof TransferStatus.Done && !checkStages(load)) {
        return;
      }
    }
    if (status instanceof TransferStatus.Done
        && load.everyStageChecked()
        && load.everyLayerAnnounced()) {
      reads.reportTelemetry(load); // before the release, which drops what the transport measured
      reads.release(load);
      if (ConsumerReplies.sendCompletion(ranks.lead(), settings.engineId(), counters, load)) {
        load.startPhase(TransferSpans.LOAD_VALIDATE);
        load.completionSent(now + settings.replyTimeout().toNanos());
      } else {
        handshakes.suspect(load.peer().engineId());
        fail(load, "could not send the completion to " + load.peer().engineId());
      }
    } else if (now >= load.stateDeadline()) {
      fail(load, "read did not finish before the lease deadline; its bytes are not trusted");
    }
  }

  /**
   * A READ of {@code load} failed: a streamed load's failed range is posted once more (its layers
   * are read in ranges as P computes them), any other load fails.
   */
  private void readFailed(Load load, TransferStatus.Failed failed) {
    if (load.params().streamed() && !load.retried()) {
      load.retrying();
      LOG.log(
          Level.WARNING,
          "a read of {0} failed ({1}); reading its layers once more",
          load.requestId(),
          failed.reason());
      try {
        if (reads.repostFailedStage(load)) {
          return;
        }
      } catch (TransportException | IllegalArgumentException e) {
        handshakes.suspect(load.peer().engineId());
        fail(load, "read could not be posted again: " + e.getMessage());
        return;
      }
    }
    handshakes.suspect(load.peer().engineId());
    fail(load, "read failed: " + failed.reason() + (load.retried() ? ", read twice" : ""));
  }

  /**
   * Checks each stage of {@code load} whose READs are done, in order, while later stages still
   * move, and posts the stages that waited for staging room once the checked ones gave theirs back;
   * whether the load goes on (a mismatch or a failed post fails it).
   */
  private boolean checkStages(Load load) {
    for (Optional<Load.Stage> stage = load.uncheckedStage();
        stage.isPresent() && reads.status(stage.get().reads()) instanceof TransferStatus.Done;
        stage = load.uncheckedStage()) {
      try {
        reads.scatter(stage.get().reads());
      } catch (RuntimeException e) {
        fail(load, "copying the staged read into place failed: " + e.getMessage());
        return false;
      }
      Load.Stage checked = stage.get();
      Optional<String> corrupt =
          checked.layers().isPresent()
              ? LoadChecks.layerProblem(
                  load.params(),
                  load.plan(),
                  ranks,
                  checked.fromIndex(),
                  checked.toIndex(),
                  checked.layers().get(),
                  load.layerChecksums(checked.layers().get()))
              : LoadChecks.contentProblem(
                  load.params(), load.plan(), ranks, checked.fromIndex(), checked.toIndex());
      if (corrupt.isPresent()) {
        counters.rejected(RejectedInput.CHECKSUM_MISMATCH, load.requestId() + ": " + corrupt.get());
        fail(load, corrupt.get() + "; not using the read");
        return false;
      }
      load.stageChecked();
    }
    try {
      reads.postWaiting(load);
    } catch (TransportException | IllegalArgumentException e) {
      handshakes.suspect(load.peer().engineId());
      fail(load, "read could not be posted: " + e.getMessage());
      return false;
    }
    return true;
  }

  /**
   * Why a load can no longer trust its producer, if it cannot: the producer restarted after the
   * load chose it, or stopped answering.
   */
  private Optional<String> lostProducer(Load load) {
    Optional<String> gone = handshakes.goneSince(load.params().producerEngineId(), load.epoch());
    if (gone.isPresent()) {
      return Optional.of(
          "producer " + load.params().producerEngineId() + " is gone: " + gone.get());
    }
    if (!load.hasPeer()) {
      return Optional.empty();
    }
    ProducerPeer chosen = load.peer();
    return handshakes
        .current(chosen.engineId())
        .filter(now -> now.incarnation() != chosen.incarnation())
        .map(
            now ->
                "producer "
                    + now.engineId()
                    + " restarted (incarnation "
                    + Long.toHexString(chosen.incarnation())
                    + " is gone); its lease ended with it");
  }
}
