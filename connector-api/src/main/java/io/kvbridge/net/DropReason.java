package io.kvbridge.net;

/** Why a server closed a connection before its conversation ended. */
public enum DropReason {
  /** The conversation was not over by the server's connection deadline. */
  DEADLINE_PASSED,
  /** The peer's address already held as many connections as one address may. */
  ADDRESS_LIMIT,
  /** The server already held as many connections as it may. */
  TOTAL_LIMIT,
  /**
   * The peer announced a frame longer than a handshake frame may be ({@code
   * Handshake.MAX_FRAME_BYTES}), or negative.
   */
  FRAME_REFUSED,
  /**
   * The connection had proved nothing yet and was the oldest such when a cap was reached: it was
   * closed to make room for a newer one.
   */
  EVICTED
}
