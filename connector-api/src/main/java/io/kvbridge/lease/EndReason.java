package io.kvbridge.lease;

/** Why a lease ended. Every lease ends exactly once, for exactly one of these. */
public enum EndReason {
  /** The consumer read the blocks and P acknowledged the read: the normal ending. */
  READ,
  /** The deadline passed before the consumer acknowledged a read. */
  EXPIRED,
  /** The producer took the blocks back: the request was aborted, the peer died, or shutdown. */
  REVOKED,
  /**
   * The consumer gave the blocks back without reading them: the request was aborted or finished on
   * D first, or D already held the KV.
   */
  RELEASED
}
