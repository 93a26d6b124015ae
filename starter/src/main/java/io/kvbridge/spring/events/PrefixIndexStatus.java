package io.kvbridge.spring.events;

import io.kvbridge.events.PrefixIndex;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A prefix index's figures as the {@code kvbridge} endpoint writes them: what the index holds, what
 * became of the events offered to it and of those refused before it, and how often requests went
 * where their prefix was cached.
 *
 * @param blocks blocks the index holds over every engine
 * @param engines engines the index follows
 * @param offered batches and snapshots offered to the index, by outcome, keyed by {@link
 *     PrefixIndex.Outcome} constant name ({@code APPLIED}, {@code GAP}, ...); every constant is
 *     present, in declaration order when built by {@link #of}
 * @param resyncs snapshots the index applied
 * @param refused batches refused before the index saw them: malformed, or naming another engine
 *     than the one whose feed they came from
 * @param unauthenticated batches or snapshots refused because their MAC was missing or wrong
 * @param unreachable times a node's events could not be read
 * @param requests requests routed
 * @param cacheRouted requests sent to a node for what its cache holds
 */
public record PrefixIndexStatus(
    long blocks,
    int engines,
    Map<String, Long> offered,
    long resyncs,
    long refused,
    long unauthenticated,
    long unreachable,
    long requests,
    long cacheRouted) {

  /** Copies {@code offered}, keeping its order; refuses a negative count. */
  public PrefixIndexStatus {
    requireCount("blocks", blocks);
    requireCount("engines", engines);
    Map<String, Long> copy = new LinkedHashMap<>();
    offered.forEach(
        (outcome, count) -> {
          Objects.requireNonNull(outcome, "an outcome in offered");
          Objects.requireNonNull(count, () -> "offered " + outcome);
          requireCount("offered " + outcome, count);
          copy.put(outcome, count);
        });
    offered = Collections.unmodifiableMap(copy);
    requireCount("resyncs", resyncs);
    requireCount("refused", refused);
    requireCount("unauthenticated", unauthenticated);
    requireCount("unreachable", unreachable);
    requireCount("requests", requests);
    requireCount("cacheRouted", cacheRouted);
  }

  /**
   * The status of an index whose {@link PrefixIndex#stats()} are {@code stats}, with the counts
   * kept around it: {@code offered} has every {@link PrefixIndex.Outcome}, in declaration order, 0
   * where {@code stats} has none.
   */
  public static PrefixIndexStatus of(
      PrefixIndex.Stats stats,
      long refused,
      long unauthenticated,
      long unreachable,
      long requests,
      long cacheRouted) {
    Map<String, Long> offered = new LinkedHashMap<>();
    for (PrefixIndex.Outcome outcome : PrefixIndex.Outcome.values()) {
      offered.put(outcome.name(), stats.count(outcome));
    }
    return new PrefixIndexStatus(
        stats.blocks(),
        stats.engines(),
        offered,
        stats.resyncs(),
        refused,
        unauthenticated,
        unreachable,
        requests,
        cacheRouted);
  }

  /**
   * The share of requests sent to a node for what its cache holds, {@code cacheRouted / requests};
   * 0 before any request.
   */
  public double hitRate() {
    return requests == 0 ? 0 : (double) cacheRouted / requests;
  }

  private static void requireCount(String name, long count) {
    if (count < 0) {
      throw new IllegalArgumentException(name + " is a count, at least 0, got " + count);
    }
  }
}
