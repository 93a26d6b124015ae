package io.kvbridge.runtime.consumer;

import io.kvbridge.integrity.ReadDigest;
import io.kvbridge.observe.TransferSpan;
import io.kvbridge.observe.TransferSpans;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.wire.LeaseRef;
import io.kvbridge.wire.ProtocolMessage;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * One request's load on the consumer, from the parameters it arrived with to the moment it is
 * reported received or failed. A load is in exactly one state at a time; {@link LoadTable} holds
 * every load that is neither refused, releasing nor final.
 *
 * <pre>
 *  matchRemote ──► CONFIRMING ──Confirmed──► AWAITING_ALLOCATION ──afterAllocate──► READY
 *       │             │ (handshake, Confirm)        │                                  │
 *       │             │                             │                   buildStepMetadata +
 *       │             │                             │                   startLoad (safety margin)
 *       │             ▼                             ▼                                  ▼
 *       │          REFUSED: Unavailable      FAILED (too few blocks)      READING ──Done + checksums──►
 *       │          at the next matchRemote                                   │      AWAITING_REPLY
 *       │             ▲                                                      │          │      │
 *       │             │ (unreachable)            read failed / lease deadline▼      NACK│  ACK │
 *       └─(local hit)─► RELEASING ──handshake, Release──► RELEASED       FAILED ◄──────┘      ▼
 *                                                                                      RECEIVED
 * </pre>
 *
 * <table>
 *   <caption>States, what bounds them, and what the engine owns</caption>
 *   <tr><th>state</th><th>ends when</th><th>bounded by</th><th>blocks borrowed</th></tr>
 *   <tr><td>CONFIRMING</td><td>Confirmed, NACK, handshake failure</td>
 *       <td>handshake timeout + reply timeout</td><td>none</td></tr>
 *   <tr><td>RELEASING</td><td>Release sent, handshake failure</td>
 *       <td>handshake timeout + reply timeout</td><td>none</td></tr>
 *   <tr><td>AWAITING_ALLOCATION</td><td>{@code afterAllocate}</td>
 *       <td>none on D: the engine allocates in its next step; heartbeats keep the lease</td>
 *       <td>none</td></tr>
 *   <tr><td>READY</td><td>{@code startLoad}</td><td>the engine's next step</td><td>yes</td></tr>
 *   <tr><td>READING</td><td>transfer done or failed</td>
 *       <td>the lease deadline on this clock</td><td>yes</td></tr>
 *   <tr><td>AWAITING_REPLY</td><td>ACK or NACK</td><td>reply timeout</td><td>yes</td></tr>
 *   <tr><td>REFUSED</td><td>the engine's next {@code matchRemote} or {@code cancelLoad}</td>
 *       <td>the most refusals kept</td><td>none</td></tr>
 * </table>
 *
 * <p>RECEIVED, FAILED, CANCELLED and RELEASED are final. Each transition is a method named for what
 * happened, and each checks the state it leaves: a transition from any other state is a bug and
 * throws {@link IllegalStateException}.
 *
 * <p>Any state may end by {@code cancelLoad} (the producer is told to release the lease), by the
 * producer's restart (a new incarnation), or by the connector closing. Heartbeats renew the lease
 * of every load from AWAITING_ALLOCATION to READING.
 *
 * <p>Threads: confined to the connector's lock.
 */
final class Load {

  /** Where a load is in its life. */
  enum State {
    /** Its lease is being confirmed with the producer, the handshake first if need be. */
    CONFIRMING,
    /** A full local hit: nothing to read; its lease is released once the producer is reachable. */
    RELEASING,
    /**
     * Answered ready: the engine allocates in its step. Unless {@link #isConfirmed()}, the CONFIRM
     * is still in flight (sent at once to a producer already handshaken).
     */
    AWAITING_ALLOCATION,
    /**
     * The engine lent its blocks; the READs are posted at {@code startLoad}, or, if the lease is
     * not confirmed yet, as soon as CONFIRMED arrives.
     */
    READY,
    READING,
    AWAITING_REPLY,
    /** Not confirmed; the engine learns why at its next {@code matchRemote}. */
    REFUSED,
    /** Final: read, checked and acknowledged by the producer. */
    RECEIVED,
    /** Final: ended after it was confirmed, and reported to the engine as a failure. */
    FAILED,
    /** Final: the engine cancelled it, or the connector closed. */
    CANCELLED,
    /** Final: a full local hit whose lease was released. */
    RELEASED;

    /** Whether a heartbeat should keep this load's lease alive. */
    boolean wantsHeartbeats() {
      return this == AWAITING_ALLOCATION || this == READY || this == READING;
    }

    /** Whether the engine has lent the load its blocks. */
    boolean borrowsBlocks() {
      return this == READY || this == READING || this == AWAITING_REPLY;
    }

    /** Whether a load in this state has ended for good. */
    boolean isFinal() {
      return this == RECEIVED || this == FAILED || this == CANCELLED || this == RELEASED;
    }
  }

  /** The states of a load {@link LoadTable} lists. */
  private static final State[] LISTED = {
    State.CONFIRMING, State.AWAITING_ALLOCATION, State.READY, State.READING, State.AWAITING_REPLY
  };

  private final String requestId;
  private final TransferParams params;
  private final LeaseKey key;
  private final LeaseRef lease;

  /** The tokens the engine held already when it asked (its local prefix). */
  private final int skipTokens;

  /** The handshake client's epoch when this load started: a producer gone later fails it. */
  private final long epoch;

  private State state;
  private long stateDeadline;

  /** What this load reads, digested; known once the producer's shape is (at confirmation). */
  private ReadDigest readDigest;

  /** The tokens not read: {@link #skipTokens} rounded down to whole blocks of both sides. */
  private int effectiveSkip;

  private ProducerPeer peer;
  private List<Integer> localBlocks = List.of();

  /** The stages of the read and the transfers posted so far, once the read is posted. */
  private Posting posting = new Posting();

  private int stagesChecked;

  /** What the planner maps, once the read is posted. */
  private TransferPlanner.Request plan;

  /** The load's span, and the span of the phase it is in; {@link TransferSpan#NONE} untraced. */
  private TransferSpan span = TransferSpan.NONE;

  private TransferSpan phase = TransferSpan.NONE;

  private long confirmSentAt = Long.MIN_VALUE;

  /** Whether P answered the CONFIRM with CONFIRMED. */
  private boolean confirmed;

  /** Whether the engine asked for the read ({@code startLoad}) before P confirmed the lease. */
  private boolean startAsked;

  private long readStartedAt;

  /** The lease's deadline on P's clock, as P last confirmed it. */
  private long producerDeadline;

  // A streamed lease: the layers its producer announced, and their checksums by producer rank,
  // then by layer, then by block of the lease.
  private int layersAnnounced;
  private boolean retried;
  private final List<List<List<Integer>>> layerChecksums = new ArrayList<>();

  /** A load whose lease is to be confirmed by {@code confirmDeadline}, on this clock. */
  Load(String requestId, TransferParams params, int skipTokens, long epoch, long confirmDeadline) {
    this(State.CONFIRMING, requestId, params, skipTokens, epoch, confirmDeadline);
  }

  private Load(
      State first,
      String requestId,
      TransferParams params,
      int skipTokens,
      long epoch,
      long deadline) {
    this.state = first;
    this.requestId = requestId;
    this.params = params;
    this.key = new LeaseKey(params.producerEngineId(), params.requestId());
    this.lease = new LeaseRef(params.requestId(), params.leaseToken());
    this.skipTokens = skipTokens;
    this.epoch = epoch;
    this.producerDeadline = params.deadlineNanos();
    this.stateDeadline = deadline;
  }

  /**
   * A full local hit: the engine holds every leased token, so the lease is released (once its
   * producer is handshaken, by {@code deadline}) instead of confirmed.
   */
  static Load releasing(
      String requestId, TransferParams params, int skipTokens, long epoch, long deadline) {
    return new Load(State.RELEASING, requestId, params, skipTokens, epoch, deadline);
  }

  String requestId() {
    return requestId;
  }

  TransferParams params() {
    return params;
  }

  LeaseKey key() {
    return key;
  }

  LeaseRef lease() {
    return lease;
  }

  int skipTokens() {
    return skipTokens;
  }

  long epoch() {
    return epoch;
  }

  State state() {
    return state;
  }

  /** When the current state must have ended, on this consumer's clock. */
  long stateDeadline() {
    return stateDeadline;
  }

  /** What this load reads, digested; {@code null} until its confirmation is sent. */
  ReadDigest readDigest() {
    return readDigest;
  }

  /** The tokens not read: the engine's prefix rounded down to whole blocks of both sides. */
  int effectiveSkip() {
    return effectiveSkip;
  }

  /** Whether the load's producer is known: its confirmation or release is being sent. */
  boolean hasPeer() {
    return peer != null;
  }

  /** The producer the load confirmed with; {@code null} before {@link #hasPeer()}. */
  ProducerPeer peer() {
    return peer;
  }

  /** The blocks the engine lent, once allocated. */
  List<Integer> localBlocks() {
    return localBlocks;
  }

  /** What the planner maps, once the read is posted. */
  TransferPlanner.Request plan() {
    return plan;
  }

  /** The bytes the read's posted transfers move. */
  long bytes() {
    return posting.bytes;
  }

  /** The stages of the read and the transfers posted so far. */
  Posting posting() {
    return posting;
  }

  /** When the confirmation was sent, on this clock; {@link Long#MIN_VALUE} before. */
  long confirmSentAt() {
    return confirmSentAt;
  }

  /** Whether the confirmation (or, for a full local hit, the release) has been sent. */
  boolean confirmSent() {
    return confirmSentAt != Long.MIN_VALUE;
  }

  /** When the read was posted, on this clock. */
  long readStartedAt() {
    return readStartedAt;
  }

  /** The lease's deadline on P's clock, as P last confirmed it. */
  long producerDeadline() {
    return producerDeadline;
  }

  /** The tokens whose KV this load writes: from {@link #effectiveSkip} to the lease's end. */
  int externalTokens() {
    return params.tokens() - effectiveSkip;
  }

  /** Traces the load under {@code span}, once. */
  void traced(TransferSpan span) {
    if (this.span != TransferSpan.NONE) {
      throw new IllegalStateException("load of " + requestId + " is traced already");
    }
    this.span = span;
  }

  /** The load's span ({@link TransferSpan#NONE} untraced or ended). */
  TransferSpan span() {
    return span;
  }

  /**
   * The confirmation is being sent to {@code peer} at {@code now}, for the read {@code digest}
   * skipping {@code skip} tokens; the load stays CONFIRMING until the answer.
   */
  void confirmSent(ProducerPeer peer, ReadDigest digest, int skip, long now) {
    expect("send its confirmation", State.CONFIRMING);
    if (confirmSent()) {
      throw new IllegalStateException("load of " + requestId + " sent its confirmation already");
    }
    this.peer = peer;
    this.readDigest = digest;
    this.effectiveSkip = skip;
    this.confirmSentAt = now;
  }

  /**
   * CONFIRMING → AWAITING_ALLOCATION, before P answered: the CONFIRM went to a producer already
   * handshaken, so the engine may allocate in the step that asked while the answer is on its way.
   * The confirmation's deadline still holds.
   */
  void answeredBeforeConfirmation() {
    expect("be answered before its confirmation", State.CONFIRMING);
    if (!confirmSent()) {
      throw new IllegalStateException("load of " + requestId + " has not sent its confirmation");
    }
    moveTo(State.AWAITING_ALLOCATION, stateDeadline);
  }

  /** Whether the CONFIRM is sent and P has not answered it yet. */
  boolean awaitsConfirmation() {
    return confirmSent()
        && !confirmed
        && (state == State.CONFIRMING
            || state == State.AWAITING_ALLOCATION
            || state == State.READY);
  }

  /** Whether P answered the CONFIRM with CONFIRMED. */
  boolean isConfirmed() {
    return confirmed;
  }

  /**
   * P confirmed the lease until {@code producerDeadline}: CONFIRMING → AWAITING_ALLOCATION; a load
   * answered before its confirmation stays where it is, without a confirmation deadline.
   */
  void confirmed(long producerDeadline) {
    if (!awaitsConfirmation()) {
      throw new IllegalStateException(
          "load of " + requestId + " cannot be confirmed in state " + state);
    }
    this.producerDeadline = Math.max(this.producerDeadline, producerDeadline);
    this.confirmed = true;
    endPhase();
    moveTo(state == State.CONFIRMING ? State.AWAITING_ALLOCATION : state, Long.MAX_VALUE);
  }

  /** AWAITING_ALLOCATION → READY: the engine lent {@code blocks}. */
  void allocated(List<Integer> blocks) {
    expect("be allocated", State.AWAITING_ALLOCATION);
    this.localBlocks = List.copyOf(blocks);
    moveTo(State.READY, stateDeadline);
  }

  /** The engine asked for the read before P confirmed the lease: it is posted on CONFIRMED. */
  void startAsked() {
    expect("be asked to start", State.READY);
    startAsked = true;
  }

  /** Whether the engine asked for the read already ({@link #startAsked()}). */
  boolean isStartAsked() {
    return startAsked;
  }

  /**
   * READY → READING: {@code posting}'s reads of {@code plan} were posted at {@code now}; they must
   * finish by {@code deadline} on this clock.
   */
  void posted(TransferPlanner.Request plan, Posting posting, long now, long deadline) {
    expect("post its read", State.READY);
    this.plan = plan;
    this.posting = posting;
    this.stagesChecked = 0;
    this.readStartedAt = now;
    moveTo(State.READING, deadline);
  }

  /** READING → AWAITING_REPLY: the read finished and checked out; P must answer by then. */
  void completionSent(long replyDeadline) {
    expect("send its completion", State.READING);
    moveTo(State.AWAITING_REPLY, replyDeadline);
  }

  /**
   * P renewed the lease until {@code producerDeadline}, on its clock; a load reading may read until
   * then (never less than before).
   */
  void renewed(long producerDeadline) {
    expect("be renewed", LISTED);
    this.producerDeadline = Math.max(this.producerDeadline, producerDeadline);
    if (state == State.READING) {
      stateDeadline = Math.max(stateDeadline, localLeaseDeadline());
    }
  }

  /** The reads still posted, which the caller releases; none are left with the load. */
  List<Read> takeReads() {
    return posting.takeReads();
  }

  /** The reads posted (until {@link #takeReads}). */
  List<Read> reads() {
    return posting.reads();
  }

  /**
   * The first stage of the read whose blocks are not checked yet, if it is posted: a stage waiting
   * for staging room is checked only once it is posted and its READs are done.
   */
  Optional<Stage> uncheckedStage() {
    return stagesChecked < posting.stages.size() && posting.stages.get(stagesChecked).posted
        ? Optional.of(posting.stages.get(stagesChecked))
        : Optional.empty();
  }

  /** How many layers of a streamed lease its producer announced computed: layers 0 to this. */
  int layersAnnounced() {
    return layersAnnounced;
  }

  /** The producer announced layers {@code [from, to)} computed, with their checksums. */
  void announced(ProtocolMessage.Layers layers) {
    if (layers.fromLayer() != layersAnnounced) {
      throw new IllegalStateException(
          "load of " + requestId + " was announced layer " + layers.fromLayer() + " out of turn");
    }
    for (int q = 0; q < layers.checksums().size(); q++) {
      if (layerChecksums.size() == q) {
        layerChecksums.add(new ArrayList<>());
      }
      layerChecksums.get(q).addAll(layers.checksums().get(q));
    }
    layersAnnounced = layers.toLayer();
  }

  /** The checksums announced of {@code layers}, by producer rank, then layer, then block. */
  List<List<List<Integer>>> layerChecksums(TransferPlanner.Layers layers) {
    List<List<List<Integer>>> out = new ArrayList<>(layerChecksums.size());
    for (List<List<Integer>> rank : layerChecksums) {
      out.add(rank.subList(layers.from(), layers.to()));
    }
    return out;
  }

  /**
   * Whether every layer of the lease may be read: always, unless it is streamed and its producer
   * has not announced its last layer yet.
   */
  boolean everyLayerAnnounced() {
    return !params.streamed() || layersAnnounced == peer.layouts().get(0).layers();
  }

  /** The stages of the read posted and not checked yet, in order. */
  List<Stage> uncheckedStages() {
    List<Stage> out = new ArrayList<>();
    for (int i = stagesChecked; i < posting.stages.size(); i++) {
      if (posting.stages.get(i).posted) {
        out.add(posting.stages.get(i));
      }
    }
    return out;
  }

  /** Whether a stage of the read was posted again after its READs failed. */
  boolean retried() {
    return retried;
  }

  /** A stage of the read is posted again after its READs failed: the load's one retry. */
  void retrying() {
    expect("retry a stage of its read", State.READING);
    retried = true;
  }

  /** Whether every stage of the read was posted and checked out. */
  boolean everyStageChecked() {
    return stagesChecked == posting.stages.size();
  }

  /** The stage {@link #uncheckedStage} gave checked out. */
  void stageChecked() {
    expect("check a stage of its read", State.READING);
    stagesChecked++;
  }

  /** CONFIRMING or RELEASING → REFUSED: the lease could not be confirmed or released. */
  void refused() {
    expect("be refused", State.CONFIRMING, State.RELEASING);
    moveTo(State.REFUSED, Long.MAX_VALUE);
  }

  /** RELEASING → RELEASED: the release goes to {@code peer}, the producer now known. */
  void released(ProducerPeer peer, long now) {
    expect("be released", State.RELEASING);
    this.peer = peer;
    this.confirmSentAt = now;
    moveTo(State.RELEASED, Long.MAX_VALUE);
  }

  /** AWAITING_REPLY → RECEIVED: P acknowledged the read. */
  void received() {
    expect("be received", State.AWAITING_REPLY);
    moveTo(State.RECEIVED, Long.MAX_VALUE);
  }

  /** A confirmed load failed: allocation, safety margin, read, checksums, reply or producer. */
  void failed() {
    expect("fail", State.AWAITING_ALLOCATION, State.READY, State.READING, State.AWAITING_REPLY);
    moveTo(State.FAILED, Long.MAX_VALUE);
  }

  /** A load not yet refused nor final was cancelled by the engine or by the connector closing. */
  void cancelled() {
    expect("be cancelled", LISTED);
    moveTo(State.CANCELLED, Long.MAX_VALUE);
  }

  private void expect(String what, State... from) {
    for (State s : from) {
      if (state == s) {
        return;
      }
    }
    throw new IllegalStateException(
        "load of " + requestId + " cannot " + what + " in state " + state);
  }

  private void moveTo(State next, long deadline) {
    state = next;
    stateDeadline = deadline;
  }

  /** Ends the current phase's span, if any, and starts the span of phase {@code name}. */
  void startPhase(String name) {
    phase.end();
    phase = span.startChild(name);
  }

  /** The current phase's span ({@link TransferSpan#NONE} between phases). */
  TransferSpan phase() {
    return phase;
  }

  /** Ends the current phase's span, if any. */
  void endPhase() {
    phase.end();
    phase = TransferSpan.NONE;
  }

  /** Ends the load's spans: it ended as {@code outcome} ({@link TransferSpans#OUTCOME}). */
  void endSpan(String outcome) {
    endPhase();
    span.tag(TransferSpans.OUTCOME, outcome);
    span.end();
    span = TransferSpan.NONE;
  }

  /** Ends the load's spans as failed: it ended as {@code outcome} because of {@code reason}. */
  void failSpan(String outcome, String reason) {
    phase.error(reason);
    span.error(reason);
    endSpan(outcome);
  }

  /** The lease deadline converted to this consumer's clock, erring early. */
  long localLeaseDeadline() {
    return peer.clock().current().deadlineToLocal(producerDeadline);
  }

  /**
   * One posted transfer of a load's read.
   *
   * @param consumerRank the rank whose transport posted it
   * @param handle its handle there
   * @param staged the staging range it lands in and the copies that finish it, if it is staged
   */
  record Read(int consumerRank, TransferHandle handle, Optional<StagedRead> staged) {
    /** A transfer that lands in place. */
    Read(int consumerRank, TransferHandle handle) {
      this(consumerRank, handle, Optional.empty());
    }
  }

  /**
   * A part of a load's read: the producer blocks {@code [fromIndex, toIndex)} of the lease and the
   * READs that move them, checked as soon as those READs are done while later stages still move. A
   * stage is posted when its reads are; one that waits for room in the staging area is posted
   * later, once earlier stages gave theirs back.
   */
  static final class Stage {
    private final int fromIndex;
    private final int toIndex;
    private final Optional<TransferPlanner.Layers> layers;
    private final List<Read> reads = new ArrayList<>();
    private boolean posted;

    Stage(int fromIndex, int toIndex, Optional<TransferPlanner.Layers> layers) {
      this.fromIndex = fromIndex;
      this.toIndex = toIndex;
      this.layers = layers;
    }

    /** The layers the stage moves, when it moves some of a streamed lease's; empty: every layer. */
    Optional<TransferPlanner.Layers> layers() {
      return layers;
    }

    int fromIndex() {
      return fromIndex;
    }

    int toIndex() {
      return toIndex;
    }

    /** The READs that move the stage's blocks, once it is posted. */
    List<Read> reads() {
      return reads;
    }

    boolean posted() {
      return posted;
    }
  }

  /**
   * The stages of a load's read, in order, and the READs posted so far, with what they move. Stages
   * are posted in order; the first one not posted waits for staging room.
   */
  static final class Posting {
    private final List<Read> reads = new ArrayList<>();
    private final List<Stage> stages = new ArrayList<>();
    private Stage current;
    private long bytes;
    private int descriptors;

    /** Adds the stage of producer blocks {@code [fromIndex, toIndex)}, not yet posted. */
    void addStage(int fromIndex, int toIndex) {
      stages.add(new Stage(fromIndex, toIndex, Optional.empty()));
    }

    /**
     * Adds the stage of the layers {@code layers} of producer blocks {@code [fromIndex, toIndex)},
     * not yet posted: the layers of a streamed lease its producer announced.
     */
    void addStage(int fromIndex, int toIndex, TransferPlanner.Layers layers) {
      stages.add(new Stage(fromIndex, toIndex, Optional.of(layers)));
    }

    /** The first stage not yet posted, if any. */
    Optional<Stage> nextUnposted() {
      return stages.stream().filter(stage -> !stage.posted).findFirst();
    }

    /** Posts {@code stage}: the reads added next move its blocks. */
    void beginStage(Stage stage) {
      stage.posted = true;
      current = stage;
    }

    /**
     * Takes back the READs of posted {@code stage}, which the caller releases, so that the stage is
     * posted again: the next {@link #nextUnposted} names it.
     */
    List<Read> unpost(Stage stage) {
      List<Read> out = List.copyOf(stage.reads);
      reads.removeAll(out);
      stage.reads.clear();
      stage.posted = false;
      return out;
    }

    /** Adds one posted read that moves {@code bytes} in {@code descriptors} descriptors. */
    void add(Read read, long bytes, int descriptors) {
      reads.add(read);
      current.reads.add(read);
      this.bytes += bytes;
      this.descriptors += descriptors;
    }

    /**
     * The reads posted so far and not taken: a view, read under the connector's lock, as everything
     * here is (a load is polled every step; a copy per poll would cost for nothing).
     */
    List<Read> reads() {
      return Collections.unmodifiableList(reads);
    }

    /** Whether a read posted and not taken still holds a range of a staging area. */
    boolean holdsStaging() {
      return reads.stream().anyMatch(read -> read.staged().filter(StagedRead::held).isPresent());
    }

    /** The reads posted and not taken, which the caller releases; none are left. */
    List<Read> takeReads() {
      List<Read> out = List.copyOf(reads);
      reads.clear();
      return out;
    }

    long bytes() {
      return bytes;
    }

    int descriptors() {
      return descriptors;
    }
  }

  /**
   * A lease as this consumer names it: the producer's engine id and the producer's request id.
   *
   * @param producerEngineId the producer's engine id
   * @param producerRequestId the request's id on the producer
   */
  record LeaseKey(String producerEngineId, String producerRequestId) {}
}
