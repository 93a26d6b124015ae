package io.kvbridge.lease;

/** Why the lease table refused a consumer's acknowledgement or renewal. Nothing is freed. */
public enum Rejection {
  /** No live lease has this request id, and none ended recently under it. */
  UNKNOWN_LEASE,
  /** A live lease exists, but the token presented is not its token. */
  WRONG_TOKEN,
  /**
   * The token matches, but the read digest does not: the consumer read other blocks than the
   * lease's, in another order, or for another prompt. The lease stays live.
   */
  WRONG_BLOCKS,
  /** The lease already ended (a duplicate or late message). */
  ALREADY_ENDED,
  /** The deadline had passed when the message arrived: the lease ends now as EXPIRED. */
  EXPIRED
}
