package io.kvbridge.tck.schedule;

import io.kvbridge.tck.schedule.Op.AbortOnDecoder;
import io.kvbridge.tck.schedule.Op.Advance;
import io.kvbridge.tck.schedule.Op.CorruptHeldBlock;
import io.kvbridge.tck.schedule.Op.DelayNotifications;
import io.kvbridge.tck.schedule.Op.DropNotifications;
import io.kvbridge.tck.schedule.Op.DuplicateNotifications;
import io.kvbridge.tck.schedule.Op.FailNextRead;
import io.kvbridge.tck.schedule.Op.ForgeBlockList;
import io.kvbridge.tck.schedule.Op.ForgeCompletion;
import io.kvbridge.tck.schedule.Op.HoldNotifications;
import io.kvbridge.tck.schedule.Op.KillDecoder;
import io.kvbridge.tck.schedule.Op.NewRequest;
import io.kvbridge.tck.schedule.Op.ReleaseHeld;
import io.kvbridge.tck.schedule.Op.ReplayCompletion;
import io.kvbridge.tck.schedule.Op.RestartDecoder;
import io.kvbridge.tck.schedule.Op.RestartProducer;
import io.kvbridge.tck.schedule.Op.RouteToAnotherPrompt;
import io.kvbridge.tck.schedule.Op.SilentProducer;
import io.kvbridge.tck.schedule.Op.SlowHandshake;
import io.kvbridge.tck.schedule.Op.StallNextRead;
import io.kvbridge.tck.schedule.Op.Unstall;
import io.kvbridge.transfer.Transport;
import java.time.Duration;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;

/**
 * Random P/D request mixes under random faults, checked against the invariants that matter in
 * production: no block leaked or freed twice, none held past its maximum lifetime plus one sweep,
 * no corrupted read ever reported received (nor a read of a forged block list, nor KV computed for
 * another prompt, nor a lease that ended with its producer's process), every request ends, and
 * after a restart of either engine the pair serves the next forwarded request within one handshake.
 * A failing schedule shrinks to a short list of {@link Op}s that reproduces it.
 *
 * <p>A connector module runs it by extending this class with a transport factory and declaring a
 * jqwik property, with its own tries and seed, that passes its arguments to {@link #checkSchedule};
 * with {@link ScheduleSeed}, the seed can be changed at run time ({@code
 * -Dkvbridge.schedules.seed=random} or {@code =<seed>}):
 *
 * <pre>{@code
 * @Property(tries = 1000, seed = "20261130")
 * @AddLifecycleHook(ScheduleSeed.class)
 * void noScheduleLeaksCorruptsOrStrandsAnything(
 *     @ForAll("schedules") List<Op> schedule,
 *     @ForAll @IntRange(min = -8000, max = 8000) int clockSkewMillis) {
 *   checkSchedule(schedule, clockSkewMillis);
 * }
 * }</pre>
 *
 * <p>Faults are injected by wrapping each raw transport in a {@link
 * io.kvbridge.tck.faults.FaultInjectingTransport}, so every connector sees the same faults.
 */
public abstract class FaultScheduleConformance {

  /** A new agent of the connector under test, named {@code agentName}; the caller closes it. */
  protected abstract Transport newTransport(String agentName);

  /**
   * How long the engines may take to settle after one op: nothing for a synchronous transport, a
   * bound on real progress for an asynchronous one.
   */
  protected Duration patience() {
    return Duration.ofSeconds(10);
  }

  /** Runs {@code schedule} with D's clock skewed by {@code clockSkewMillis} and checks it. */
  protected final void checkSchedule(List<Op> schedule, int clockSkewMillis) {
    Simulation simulation = new Simulation(clockSkewMillis, this::newTransport, patience());
    try {
      simulation.run(schedule);
      simulation.quiesce();
      simulation.checkEverythingEnded();
    } finally {
      simulation.close();
    }
    Statistics.label("requests").collect(bucket(simulation.requests()));
    Statistics.label("served share").collect(share(simulation.served(), simulation.routed()));
    Statistics.label("failed explicitly").collect(simulation.failed() > 0 ? "some" : "none");
    int proven = simulation.restartsProven();
    Statistics.label("restarts proven").collect(proven == 0 ? "none" : proven == 1 ? "1" : "2+");
    Statistics.label("aborted on D").collect(simulation.aborted() > 0 ? "some" : "none");
  }

  /**
   * Schedules of 1 to 60 ops: requests, simulated time and faults, 5 : 3 : 3; one fault in five
   * ends or stalls a process (a restart, a slow handshake, a silent producer).
   */
  @Provide
  protected Arbitrary<List<Op>> schedules() {
    Arbitrary<Op> newRequest =
        Combinators.combine(
                Arbitraries.integers().between(1, 4),
                Arbitraries.of(false, false, false, true),
                Arbitraries.of(false, false, false, false, false, false, false, true))
            .as(NewRequest::new);
    Arbitrary<Op> advance = Arbitraries.integers().between(1, 12_000).map(Advance::new);
    Arbitrary<Op> messagesAndReads =
        Arbitraries.oneOf(
            Arbitraries.integers().between(1, 3).map(DropNotifications::new),
            Arbitraries.integers().between(1, 3).map(HoldNotifications::new),
            Arbitraries.just(new ReleaseHeld()),
            Combinators.combine(
                    Arbitraries.integers().between(1, 3), Arbitraries.integers().between(1, 4))
                .as(DelayNotifications::new),
            Arbitraries.integers().between(1, 3).map(DuplicateNotifications::new),
            Arbitraries.just(new FailNextRead()),
            Arbitraries.just(new StallNextRead()),
            Arbitraries.just(new Unstall()),
            Arbitraries.just(new ForgeCompletion()),
            Arbitraries.just(new ReplayCompletion()),
            Arbitraries.integers().between(0, 4).map(ForgeBlockList::new),
            Arbitraries.of(false, true).map(RouteToAnotherPrompt::new),
            Arbitraries.just(new CorruptHeldBlock()),
            Arbitraries.just(new AbortOnDecoder()));
    Arbitrary<Op> processes =
        Arbitraries.oneOf(
            Arbitraries.just(new KillDecoder()),
            Arbitraries.of(false, true).map(RestartProducer::new),
            Arbitraries.of(false, true).map(RestartDecoder::new),
            Arbitraries.integers().between(1_000, 20_000).map(SlowHandshake::new),
            Arbitraries.integers().between(1_000, 20_000).map(SilentProducer::new));
    Arbitrary<Op> faults =
        Arbitraries.frequencyOf(
            net.jqwik.api.Tuple.of(4, messagesAndReads), net.jqwik.api.Tuple.of(1, processes));
    return Arbitraries.frequencyOf(
            net.jqwik.api.Tuple.of(5, newRequest),
            net.jqwik.api.Tuple.of(3, advance),
            net.jqwik.api.Tuple.of(3, faults))
        .list()
        .ofMinSize(1)
        .ofMaxSize(60);
  }

  private static String bucket(int count) {
    return count < 5 ? "<5" : count < 15 ? "5-14" : "15+";
  }

  private static String share(int part, int whole) {
    if (whole == 0) {
      return "no routed request";
    }
    return part * 4 >= whole * 3 ? ">=75%" : part * 2 >= whole ? "50-75%" : "<50%";
  }
}
