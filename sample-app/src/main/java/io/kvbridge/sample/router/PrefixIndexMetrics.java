package io.kvbridge.sample.router;

import io.kvbridge.events.PrefixIndex;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * How long the router takes to choose each request's nodes, {@code kvbridge.router.decision} (the
 * prompt's hashes, the prefix index, the load; not the calls), and its prefix index as meters, when
 * the router is prefix-aware:
 *
 * <ul>
 *   <li>{@code kvbridge.router.prefix.index.blocks} and {@code .engines}: what the index holds;
 *   <li>{@code kvbridge.router.prefix.index.offered{outcome}}: batches and snapshots offered to the
 *       index, by {@link PrefixIndex.Outcome} ({@code applied}, {@code gap}, {@code
 *       wrong_incarnation}, ...);
 *   <li>{@code kvbridge.router.prefix.index.resyncs}: snapshots applied;
 *   <li>{@code kvbridge.router.prefix.feed.refused}: batches refused before the index (malformed,
 *       another engine's), {@code .unreachable}: reads of a node's events that failed;
 *   <li>{@code kvbridge.router.prefix.routed}: requests sent to a decode node for its cache, and
 *       {@code kvbridge.router.requests}: every request, so that their ratio is the hit rate.
 * </ul>
 */
public final class PrefixIndexMetrics {

  /** Registers the meters of {@code router}'s prefix index in {@code registry}, if it keeps one. */
  void register(PdRouter router, MeterRegistry registry) {
    Timer decisions =
        Timer.builder("kvbridge.router.decision")
            .description(
                "Time the router took to choose a request's nodes: prompt hashes, prefix index, load")
            .publishPercentileHistogram()
            // A decision takes microseconds: buckets from there, not from a timer's default 1 ms,
            // and one at exactly 1 ms, a router's objective for it.
            .minimumExpectedValue(Duration.ofNanos(1_000))
            .maximumExpectedValue(Duration.ofSeconds(10))
            .serviceLevelObjectives(Duration.ofMillis(1))
            .register(registry);
    router.onDecision(nanos -> decisions.record(nanos, TimeUnit.NANOSECONDS));
    if (router.prefixRouting().isEmpty()) {
      return;
    }
    Gauge.builder(
            "kvbridge.router.prefix.index.blocks",
            router,
            r -> index(r).map(i -> (double) i.index().blocks()).orElse(0.0))
        .description("Blocks the router's prefix index holds over every engine")
        .register(registry);
    Gauge.builder(
            "kvbridge.router.prefix.index.engines",
            router,
            r -> index(r).map(i -> (double) i.index().engines()).orElse(0.0))
        .description("Engines the router's prefix index follows")
        .register(registry);
    for (PrefixIndex.Outcome outcome : PrefixIndex.Outcome.values()) {
      FunctionCounter.builder(
              "kvbridge.router.prefix.index.offered",
              router,
              r -> index(r).map(i -> (double) i.index().count(outcome)).orElse(0.0))
          .tag("outcome", outcome.name().toLowerCase(Locale.ROOT))
          .description("KV event batches and snapshots offered to the prefix index, by outcome")
          .register(registry);
    }
    FunctionCounter.builder(
            "kvbridge.router.prefix.index.resyncs",
            router,
            r -> index(r).map(i -> (double) i.index().resyncs()).orElse(0.0))
        .description("Snapshots the prefix index applied")
        .register(registry);
    FunctionCounter.builder(
            "kvbridge.router.prefix.feed.refused",
            router,
            r -> index(r).map(i -> (double) i.refusedBatches()).orElse(0.0))
        .description("KV event batches refused before the index: malformed, or another engine's")
        .register(registry);
    FunctionCounter.builder(
            "kvbridge.router.prefix.feed.unauthenticated",
            router,
            r -> index(r).map(i -> (double) i.unauthenticated()).orElse(0.0))
        .description("KV event snapshots and batches refused for a missing or wrong mac")
        .register(registry);
    FunctionCounter.builder(
            "kvbridge.router.prefix.feed.unreachable",
            router,
            r -> index(r).map(i -> (double) i.unreachable()).orElse(0.0))
        .description("Reads of a node's KV events that failed")
        .register(registry);
    FunctionCounter.builder("kvbridge.router.prefix.routed", router, r -> r.prefixRouted.get())
        .description("Requests sent to a decode node because its cache held the most of the prompt")
        .register(registry);
    FunctionCounter.builder(
            "kvbridge.router.prefix.prefill-routed", router, r -> r.prefillPrefixRouted.get())
        .description(
            "Requests sent to a prefill node because its cache held the most of the prompt")
        .register(registry);
    FunctionCounter.builder(
            "kvbridge.router.prefix.decoded-alone", router, r -> r.decodedAlone.get())
        .description(
            "Requests sent straight to a decode node holding enough of the prompt; no prefill, no"
                + " lease")
        .register(registry);
    FunctionCounter.builder("kvbridge.router.requests", router, r -> r.requests.get())
        .description("Completion requests the router received")
        .register(registry);
  }

  private static Optional<PrefixRouting.IndexStats> index(PdRouter router) {
    // The index's own figures only: a whole RouterStats (every node's, the decision percentiles)
    // for each meter read would be work the meter throws away.
    return router.prefixRouting().map(PrefixRouting::stats);
  }
}
