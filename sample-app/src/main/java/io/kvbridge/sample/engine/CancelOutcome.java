package io.kvbridge.sample.engine;

/** What {@link Engine#cancel} did to a request. */
public enum CancelOutcome {
  /**
   * The engine holds nothing for the request: it never saw it, already finished it and freed its
   * blocks, or already cancelled it. Nothing changed.
   */
  NOT_FOUND,
  /** The request was still waiting for blocks: it left the queue and holds nothing. */
  WITHDRAWN,
  /**
   * The request was loading KV from a producer: the connector cancelled the load (the producer is
   * told to release the lease) and the request's blocks are free, or are freed as soon as the
   * connector reports the load's end if it had already ended.
   */
  LOAD_CANCELLED,
  /**
   * The request had finished and its blocks were held for a consumer: the lease was revoked and the
   * blocks are freed at the next step.
   */
  LEASE_REVOKED
}
