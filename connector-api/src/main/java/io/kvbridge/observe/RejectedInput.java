package io.kvbridge.observe;

/**
 * The kinds of untrusted input a connector refused. Each refusal frees nothing, moves nothing and
 * is counted under one of these.
 */
public enum RejectedInput {
  /** A notification that is not a well-formed protocol message. */
  MALFORMED_MESSAGE,
  /** A message from an agent this connector never handshook with. */
  UNKNOWN_PEER,
  /** A completion or heartbeat for a request id with no lease, live or recent. */
  UNKNOWN_LEASE,
  /** A completion or heartbeat whose token does not match the live lease. */
  WRONG_TOKEN,
  /**
   * A completion whose token matches but whose read digest does not: other blocks, another order or
   * another prompt than the lease's. Answered with NACK; the lease stays live.
   */
  WRONG_BLOCKS,
  /**
   * A completion whose consumer did not confirm the lease, or confirmed another read (read digest
   * or skipped tokens) than the one it completes. Answered with NACK; the lease stays live.
   */
  NOT_CONFIRMED,
  /** Transfer parameters whose prompt digest is not the digest of the request's own prompt. */
  PROMPT_MISMATCH,
  /** A block whose content did not match the checksum P recorded when it granted the lease. */
  CHECKSUM_MISMATCH,
  /**
   * A completion or heartbeat for a lease that already ended, or a consumer's second completion or
   * confirmation of a lease after its read was acknowledged: a duplicate or late message.
   */
  LATE_OR_DUPLICATE,
  /** A completion that arrived after the lease's deadline. */
  EXPIRED_COMPLETION,
  /** An ACK or NACK that matches no read awaiting validation. */
  UNEXPECTED_REPLY,
  /** Transfer parameters that are missing fields, out of range or inconsistent. */
  MALFORMED_TRANSFER_PARAMS,
  /** A handshake that failed or was refused (incompatible layout, bad payload). */
  HANDSHAKE_REFUSED,
  /** A handshake that did not prove the deployment's secret. */
  HANDSHAKE_UNAUTHENTICATED,
  /**
   * A handshake refused before anything was loaded because it would replace what this engine trusts
   * of a live peer: it names the transport agent of another known peer, answers as a start of the
   * peer older than the one known (stale metadata, a replayed handshake), or names other agents
   * than the known start of the peer.
   */
  FORGED_PEER,
  /** A load refused because its producer already had as many loads as one producer may. */
  OVER_PRODUCER_LIMIT,
  /**
   * Transfer parameters whose trace context ({@code traceparent}, {@code tracestate}) is malformed:
   * it is ignored and the load goes on in a trace of its own.
   */
  MALFORMED_TRACE_CONTEXT,
  /** A LAYERS announcement of a streamed lease naming layers it announced already. */
  LAYERS_DUPLICATE,
  /** A LAYERS announcement that skips layers: it does not start where the last one ended. */
  LAYERS_OUT_OF_ORDER,
  /**
   * A LAYERS announcement that goes beyond the model's layers, or names other ranks or blocks than
   * the lease's.
   */
  LAYERS_BEYOND_MODEL,
  /**
   * A completion of a streamed lease before its producer announced its last layer: nothing can have
   * read what is not computed yet. Answered with NACK; the lease stays live.
   */
  LAYERS_MISSING
}
