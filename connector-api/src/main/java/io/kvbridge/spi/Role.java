package io.kvbridge.spi;

/** What an engine does in a disaggregated deployment. */
public enum Role {
  /** Prefill node: grants leases and lets consumers read its blocks. */
  PRODUCER,
  /** Decode node: reads blocks from producers. */
  CONSUMER,
  /** Both at once (e.g. a colocated test deployment). */
  BOTH;

  /** Whether this role grants leases. */
  public boolean produces() {
    return this != CONSUMER;
  }

  /** Whether this role reads from producers. */
  public boolean consumes() {
    return this != PRODUCER;
  }
}
