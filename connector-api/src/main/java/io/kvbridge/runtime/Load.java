package io.kvbridge.runtime;

import io.kvbridge.integrity.ReadDigest;
import io.kvbridge.observe.TransferSpan;
import io.kvbridge.observe.TransferSpans;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.wire.LeaseRef;
import java.util.List;

/**
 * One request's load on the consumer, from the parameters it arrived with to the moment it is
 * reported received or failed. A load is in exactly one state at a time; {@link LoadTable} holds
 * every load that has not ended.
 *
 * <pre>
 *  matchRemote ──► CONFIRMING ──Confirmed──► AWAITING_ALLOCATION ──afterAllocate──► READY
 *                     │ (handshake, Confirm)        │                                  │
 *                     │                             │                   buildStepMetadata +
 *                     │                             │                   startLoad (safety margin)
 *                     ▼                             ▼                                  ▼
 *               refused: Unavailable        failed (too few blocks)      READING ──Done + checksums──►
 *               at the next matchRemote                                     │      AWAITING_REPLY
 *                                                                           │          │      │
 *                                               read failed / lease deadline▼      NACK│  ACK │
 *                                                                        failed ◄──────┘      ▼
 *                                                                                         received
 * </pre>
 *
 * <table>
 *   <caption>States, what bounds them, and what the engine owns</caption>
 *   <tr><th>state</th><th>ends when</th><th>bounded by</th><th>blocks borrowed</th></tr>
 *   <tr><td>CONFIRMING</td><td>Confirmed, NACK, handshake failure</td>
 *       <td>handshake timeout + reply timeout</td><td>none</td></tr>
 *   <tr><td>AWAITING_ALLOCATION</td><td>{@code afterAllocate}</td>
 *       <td>the lease (heartbeats keep it)</td><td>none</td></tr>
 *   <tr><td>READY</td><td>{@code startLoad}</td><td>the engine's next step</td><td>yes</td></tr>
 *   <tr><td>READING</td><td>transfer done or failed</td>
 *       <td>the lease deadline on this clock</td><td>yes</td></tr>
 *   <tr><td>AWAITING_REPLY</td><td>ACK or NACK</td><td>reply timeout</td><td>yes</td></tr>
 * </table>
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
    CONFIRMING,
    AWAITING_ALLOCATION,
    READY,
    READING,
    AWAITING_REPLY;

    /** Whether a heartbeat should keep this load's lease alive. */
    boolean wantsHeartbeats() {
      return this == AWAITING_ALLOCATION || this == READY || this == READING;
    }

    /** Whether the engine has lent the load its blocks. */
    boolean borrowsBlocks() {
      return this == READY || this == READING || this == AWAITING_REPLY;
    }
  }

  final String requestId;
  final TransferParams params;
  final LeaseKey key;
  final LeaseRef lease;

  /** The tokens the engine held already when it asked (its local prefix). */
  final int skipTokens;

  /** The handshake client's epoch when this load started: a producer gone later fails it. */
  final long epoch;

  /** What this load reads, digested; known once the producer's shape is (at confirmation). */
  ReadDigest readDigest;

  /** The tokens not read: {@link #skipTokens} rounded down to whole blocks of both sides. */
  int effectiveSkip;

  private State state = State.CONFIRMING;
  private long stateDeadline;
  ProducerPeer peer;
  List<Integer> localBlocks = List.of();

  /** The transfers of the read, while reading: one or two per (consumer rank, producer rank). */
  List<Read> reads = List.of();

  /** What the planner maps, once the read is posted. */
  TransferPlanner.Load plan;

  /** The bytes the read moves. */
  long bytes;

  /** The descriptors the read posts, over every rank pair. */
  int descriptors;

  /** The load's span, and the span of the phase it is in; {@link TransferSpan#NONE} untraced. */
  TransferSpan span = TransferSpan.NONE;

  private TransferSpan phase = TransferSpan.NONE;

  long confirmSentAt = Long.MIN_VALUE;
  long readStartedAt;

  /** The lease's deadline on P's clock, as P last confirmed it. */
  long producerDeadline;

  Load(String requestId, TransferParams params, int skipTokens, long epoch, long confirmDeadline) {
    this.requestId = requestId;
    this.params = params;
    this.key = new LeaseKey(params.producerEngineId(), params.requestId());
    this.lease = new LeaseRef(params.requestId(), params.leaseToken());
    this.skipTokens = skipTokens;
    this.epoch = epoch;
    this.producerDeadline = params.deadlineNanos();
    this.stateDeadline = confirmDeadline;
  }

  /** The tokens whose KV this load writes: from {@link #effectiveSkip} to the lease's end. */
  int externalTokens() {
    return params.tokens() - effectiveSkip;
  }

  State state() {
    return state;
  }

  /** When the current state must have ended, on this consumer's clock. */
  long stateDeadline() {
    return stateDeadline;
  }

  void moveTo(State next, long deadline) {
    state = next;
    stateDeadline = deadline;
  }

  /** Extends the current state's deadline, never shortening it. */
  void extendDeadline(long deadline) {
    stateDeadline = Math.max(stateDeadline, deadline);
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
   */
  record Read(int consumerRank, TransferHandle handle) {}

  /**
   * A lease as this consumer names it: the producer's engine id and the producer's request id.
   *
   * @param producerEngineId the producer's engine id
   * @param producerRequestId the request's id on the producer
   */
  record LeaseKey(String producerEngineId, String producerRequestId) {}
}
