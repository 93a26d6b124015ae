package io.kvbridge.tck.schedule;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.tck.schedule.Op.AbortOnDecoder;
import io.kvbridge.tck.schedule.Op.Advance;
import io.kvbridge.tck.schedule.Op.CorruptHeldBlock;
import io.kvbridge.tck.schedule.Op.DelayNotifications;
import io.kvbridge.tck.schedule.Op.DropNotifications;
import io.kvbridge.tck.schedule.Op.DuplicateNotifications;
import io.kvbridge.tck.schedule.Op.FailNextRead;
import io.kvbridge.tck.schedule.Op.ForgeBlockList;
import io.kvbridge.tck.schedule.Op.ForgeCompletion;
import io.kvbridge.tck.schedule.Op.ForgeProducer;
import io.kvbridge.tck.schedule.Op.HoldNotifications;
import io.kvbridge.tck.schedule.Op.KillDecoder;
import io.kvbridge.tck.schedule.Op.NewRequest;
import io.kvbridge.tck.schedule.Op.ReleaseHeld;
import io.kvbridge.tck.schedule.Op.ReplayCompletion;
import io.kvbridge.tck.schedule.Op.ReplayDecoderHandshake;
import io.kvbridge.tck.schedule.Op.RestartDecoder;
import io.kvbridge.tck.schedule.Op.RestartProducer;
import io.kvbridge.tck.schedule.Op.RouteToAnotherPrompt;
import io.kvbridge.tck.schedule.Op.SilentProducer;
import io.kvbridge.tck.schedule.Op.SlowHandshake;
import io.kvbridge.tck.schedule.Op.StallNextRead;
import io.kvbridge.tck.schedule.Op.StreamedRequest;
import io.kvbridge.tck.schedule.Op.Unstall;
import java.util.List;
import java.util.Objects;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.statistics.Statistics;

/**
 * Random P/D request mixes under random faults, checked against the invariants that matter in
 * production: no block leaked or freed twice, none held past its maximum lifetime plus one sweep,
 * every lease ended once, no read ever reported received unless every byte of every head and token
 * D decodes from is the KV P computed (nor a read of a forged block list, nor KV computed for
 * another prompt, nor a lease that ended with its producer's process), nothing served that P did
 * not acknowledge (its lease ended READ, or RELEASED when D held every token), nothing read when D
 * holds every token, every request ends, a lease released only when D gave it back, and after a
 * restart of either engine the pair serves the next forwarded request within one handshake. A
 * failing schedule shrinks to a short list of {@link Op}s that reproduces it.
 *
 * <p>Engines of any {@link Shape}: P and D may each split the model's KV heads over several
 * tensor-parallel ranks (each rank's memory registered through its own worker side and its own
 * agent, every agent in the fault group), with blocks of different sizes; prompts mostly end in a
 * partly filled block, and D may hold a prefix of a prompt already.
 *
 * <p>A connector module runs it by extending this class with a constructor that passes its {@link
 * ConnectorUnderTest} (whose {@link ConnectorUnderTest#newTransport} agents the engines use, one
 * object for every try of a property) and declaring jqwik properties, with their own tries and
 * seed, that pass their arguments to {@link #checkSchedule}; with {@link ScheduleSeed}, the seed
 * can be changed at run time ({@code -Dkvbridge.schedules.seed=random} or {@code =<seed>}):
 *
 * <pre>{@code
 * @Property(tries = 1000, seed = "20261130")
 * @AddLifecycleHook(ScheduleSeed.class)
 * void noScheduleLeaksCorruptsOrStrandsAnything(
 *     @ForAll("schedules") List<Op> schedule,
 *     @ForAll @IntRange(min = -8000, max = 8000) int clockSkewMillis) {
 *   checkSchedule(schedule, clockSkewMillis);
 * }
 *
 * @Property(tries = 300, seed = "20261130")
 * @AddLifecycleHook(ScheduleSeed.class)
 * void noScheduleBetweenEnginesOfAnyShapeLeaksCorruptsOrStrandsAnything(
 *     @ForAll("shapes") Shape shape,
 *     @ForAll("schedules") List<Op> schedule,
 *     @ForAll @IntRange(min = -8000, max = 8000) int clockSkewMillis) {
 *   checkSchedule(shape, schedule, clockSkewMillis);
 * }
 * }</pre>
 *
 * <p>Faults are injected by wrapping each raw transport in a {@link
 * io.kvbridge.tck.faults.FaultInjectingBackend} under each agent core, so every connector sees the
 * same faults.
 */
public abstract class FaultScheduleConformance {

  private final ConnectorUnderTest connector;

  /**
   * The schedules, run over agents of {@code connector}. How long the engines may take to settle
   * after one op is its {@link ConnectorUnderTest#patience()}: nothing for a synchronous transport,
   * a bound on real progress for an asynchronous one.
   */
  protected FaultScheduleConformance(ConnectorUnderTest connector) {
    this.connector = Objects.requireNonNull(connector, "connector");
  }

  /**
   * Runs {@code schedule} between engines of one rank each ({@link Shape#SINGLE_RANK}) with D's
   * clock skewed by {@code clockSkewMillis} and checks it.
   */
  protected final void checkSchedule(List<Op> schedule, int clockSkewMillis) {
    checkSchedule(Shape.SINGLE_RANK, schedule, clockSkewMillis);
  }

  /**
   * Runs {@code schedule} between engines of {@code shape} with D's clock skewed by {@code
   * clockSkewMillis} and checks it.
   */
  protected final void checkSchedule(Shape shape, List<Op> schedule, int clockSkewMillis) {
    Simulation simulation =
        new Simulation(shape, clockSkewMillis, connector::newTransport, connector.patience());
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
    Statistics.label("held on D already")
        .collect(
            simulation.heldInFull() > 0
                ? "some in full"
                : simulation.partlyLocal() > 0 ? "some in part" : "none");
  }

  /**
   * P's and D's ranks in {1, 2, 4}, D's blocks half, equal to and twice P's four tokens, either
   * memory order, each engine's slabs in any placement (one region, or one per layer or per layer
   * and plane); shrinks towards one rank each, equal blocks and cross-layer regions.
   */
  @Provide
  protected Arbitrary<Shape> shapes() {
    return Combinators.combine(
            Arbitraries.of(1, 2, 4),
            Arbitraries.of(1, 2, 4),
            Arbitraries.of(4, 2, 8),
            Arbitraries.of(KvLayout.MemoryOrder.class),
            Arbitraries.of(KvLayout.Placement.class),
            Arbitraries.of(KvLayout.Placement.class))
        .as(
            (p, d, dBlock, order, pPlacement, dPlacement) ->
                new Shape(p, 4, d, dBlock, order, pPlacement, dPlacement, Shape.SMALL_MODEL));
  }

  /**
   * Schedules of 1 to 60 ops: requests leased once computed, streamed requests, simulated time and
   * faults, 5 : 2 : 3 : 3; one fault in five ends or stalls a process (a restart, a slow handshake,
   * a silent producer). Prompts are 1 to 16 tokens (one to four of P's blocks, mostly the last
   * partly filled); D holds none of a prompt in six requests of nine, a prefix in two, all of it in
   * one. A streamed request has 0 to 3 of its layers computed at once (the rest as time passes),
   * and any fault may fall between its layers. Read faults name the link they hit: a rank of D
   * reading from a rank of P.
   */
  @Provide
  protected Arbitrary<List<Op>> schedules() {
    Arbitrary<Op> newRequest =
        Arbitraries.integers()
            .between(1, 16)
            .flatMap(
                tokens ->
                    Combinators.combine(
                            Arbitraries.frequencyOf(
                                Tuple.of(6, Arbitraries.just(0)),
                                Tuple.of(
                                    2, Arbitraries.integers().between(1, Math.max(1, tokens - 1))),
                                Tuple.of(1, Arbitraries.just(tokens))),
                            Arbitraries.of(false, false, false, true),
                            Arbitraries.of(false, false, false, false, false, false, false, true))
                        .as(
                            (local, drops, aborted) ->
                                new NewRequest(tokens, local, drops, aborted)));
    Arbitrary<Op> streamedRequest =
        Combinators.combine(
                Arbitraries.integers().between(1, 16),
                Arbitraries.integers().between(0, 3),
                Arbitraries.of(false, false, false, true),
                Arbitraries.of(false, false, false, false, false, false, false, true))
            .as(StreamedRequest::new);
    Arbitrary<Integer> rank = Arbitraries.integers().between(0, 3);
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
            Combinators.combine(rank, rank).as(FailNextRead::new),
            Combinators.combine(rank, rank).as(StallNextRead::new),
            Arbitraries.just(new Unstall()),
            Arbitraries.just(new ForgeCompletion()),
            Arbitraries.just(new ReplayCompletion()),
            Arbitraries.integers().between(0, 4).map(ForgeBlockList::new),
            Arbitraries.of(false, true).map(RouteToAnotherPrompt::new),
            Arbitraries.just(new CorruptHeldBlock()),
            Arbitraries.of(false, true).map(ForgeProducer::new),
            Arbitraries.just(new ReplayDecoderHandshake()),
            Arbitraries.just(new AbortOnDecoder()));
    Arbitrary<Op> processes =
        Arbitraries.oneOf(
            Arbitraries.just(new KillDecoder()),
            Arbitraries.of(false, true).map(RestartProducer::new),
            Arbitraries.of(false, true).map(RestartDecoder::new),
            Arbitraries.integers().between(1_000, 20_000).map(SlowHandshake::new),
            Arbitraries.integers().between(1_000, 20_000).map(SilentProducer::new));
    Arbitrary<Op> faults =
        Arbitraries.frequencyOf(Tuple.of(4, messagesAndReads), Tuple.of(1, processes));
    return Arbitraries.frequencyOf(
            Tuple.of(5, newRequest),
            Tuple.of(2, streamedRequest),
            Tuple.of(3, advance),
            Tuple.of(3, faults))
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
