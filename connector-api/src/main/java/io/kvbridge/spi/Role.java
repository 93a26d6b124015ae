package io.kvbridge.spi;

import java.util.Locale;

/**
 * What an engine does in a disaggregated deployment. Its {@link #toString()} is the value written
 * in configuration ({@code kvbridge.role=producer}), which messages and JSON show too.
 */
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

  /** The lower-case name: {@code producer}, {@code consumer} or {@code both}. */
  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }
}
