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
  /**
   * The token matches, but the consumer's completion has no confirmation of its own behind it, or
   * names another read (read digest or skipped tokens) than the one it confirmed. The lease stays
   * live.
   */
  NOT_CONFIRMED,
  /**
   * The lease already ended, or this consumer's read of it was acknowledged already while it waits
   * for other consumers: a duplicate or late message.
   */
  ALREADY_ENDED,
  /** The deadline had passed when the message arrived: the lease ends now as EXPIRED. */
  EXPIRED
}
