package io.kvbridge.tck.schedule;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.layout.KvLayout.MemoryOrder;
import io.kvbridge.layout.KvModel;
import io.kvbridge.lease.EndReason;
import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.tck.schedule.Op.AbortOnDecoder;
import io.kvbridge.tck.schedule.Op.Advance;
import io.kvbridge.tck.schedule.Op.DropNotifications;
import io.kvbridge.tck.schedule.Op.DuplicateNotifications;
import io.kvbridge.tck.schedule.Op.FailNextRead;
import io.kvbridge.tck.schedule.Op.ForgeProducer;
import io.kvbridge.tck.schedule.Op.HoldNotifications;
import io.kvbridge.tck.schedule.Op.KillDecoder;
import io.kvbridge.tck.schedule.Op.NewRequest;
import io.kvbridge.tck.schedule.Op.ReplayDecoderHandshake;
import io.kvbridge.tck.schedule.Op.RestartDecoder;
import io.kvbridge.tck.schedule.Op.RestartProducer;
import io.kvbridge.tck.schedule.Op.SilentProducer;
import io.kvbridge.tck.schedule.Op.SlowHandshake;
import io.kvbridge.tck.schedule.Op.StallNextRead;
import io.kvbridge.tck.schedule.Op.StreamedRequest;
import io.kvbridge.tck.schedule.Op.Unstall;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Hand-written schedules for the faults that matter most, each with its expected ending; most
 * between engines of one rank each, a few between engines of several ranks and block sizes. A
 * connector module runs them by extending this class with a constructor that passes its {@link
 * ConnectorUnderTest}, whose {@link ConnectorUnderTest#newTransport} agents the engines use.
 */
public abstract class ScheduleExamplesConformanceTest {

  /** A prompt of seven tokens, its second block of four partly filled, forwarded to D. */
  private static final NewRequest ROUTED = new NewRequest(7, 0, false, false);

  /** The first READ D posts, in a shape of one rank each. */
  private static final StallNextRead STALL = new StallNextRead(0, 0);

  private final ConnectorUnderTest connector;

  /** The schedules, run over agents of {@code connector}, which this test alone uses. */
  protected ScheduleExamplesConformanceTest(ConnectorUnderTest connector) {
    this.connector = Objects.requireNonNull(connector, "connector");
  }

  @Test
  // Heartbeats renew the lease while the read stalls, but never past its maximum lifetime.
  void readThatStallsPastTheMaximumLifetimeIsNeverServedFromTheFreedBlocks() {
    Simulation simulation =
        run(List.of(STALL, ROUTED, new Advance(35_000), new Unstall(), new Advance(3_000)));

    assertThat(simulation.served()).as("served, of %s", simulation).isZero();
    assertThat(simulation.failed()).isEqualTo(1);
  }

  @Test
  void lostConfirmationFailsTheLoadAndTheLeaseStillEnds() {
    Simulation simulation = run(List.of(new DropNotifications(1), ROUTED, new Advance(3_000)));

    assertThat(simulation.served()).as("served, of %s", simulation).isZero();
    assertThat(simulation.failed()).isEqualTo(1);
    assertThat(simulation.failureReasons().get(0)).contains("did not confirm the lease");
  }

  @Test
  // The read is complete and every byte checks out, but P never hears of it: only P's ACK says the
  // lease held until the read ended, so the read is not used.
  void lostCompletionFailsTheLoadAndTheLeaseStillEnds() {
    Simulation simulation =
        run(
            List.of(STALL, ROUTED, new DropNotifications(1), new Unstall(), new Advance(3_000)),
            rightAfter -> {
              assertThat(rightAfter.served()).as("served, of %s", rightAfter).isZero();
              assertThat(rightAfter.failed()).isEqualTo(1);
              assertThat(rightAfter.failureReasons().get(0)).contains("no ACK");
            });

    assertThat(simulation.served()).as("served, of %s", simulation).isZero();
    assertThat(simulation.leaseEnds()).isEqualTo(Map.of("r0", EndReason.EXPIRED));
  }

  @Test
  void duplicatedMessagesServeTheRequestOnce() {
    Simulation simulation = run(List.of(new DuplicateNotifications(3), ROUTED, new Advance(1_000)));

    assertThat(simulation.served()).as("served, of %s", simulation).isEqualTo(1);
  }

  @Test
  void decoderKilledMidReadLeavesNothingHeldOnTheProducer() {
    Simulation simulation = run(List.of(STALL, ROUTED, new KillDecoder(), new Advance(1_000)));

    assertThat(simulation.served()).as("served, of %s", simulation).isZero();
  }

  @Test
  void requestTheRouterDropsIsFreedByExpiry() {
    Simulation simulation = run(List.of(new NewRequest(11, 0, true, false)));

    assertThat(simulation.routed()).isZero();
  }

  @Test
  void heartbeatsKeepALoadAliveWhileItWaitsPastTheFirstDeadline() {
    Simulation simulation =
        run(List.of(STALL, ROUTED, new Advance(14_000), new Unstall(), new Advance(1_000)));

    assertThat(simulation.served()).as("served, of %s", simulation).isEqualTo(1);
  }

  @ParameterizedTest(name = "forgery {0}")
  @ValueSource(ints = {0, 1, 2, 3, 4})
  void forgedBlockListIsNeverServedAndEveryBlockIsFreedOnce(int variant) {
    Simulation simulation =
        run(List.of(ROUTED, new Op.ForgeBlockList(variant), ROUTED, new Advance(1_000)));

    assertThat(simulation.served()).as("served, of %s", simulation).isEqualTo(2);
    assertThat(simulation.failed()).isEqualTo(1);
  }

  @ParameterizedTest(name = "digest rewritten: {0}")
  @ValueSource(booleans = {false, true})
  void parametersRoutedWithAnotherPromptAreNeverServed(boolean digestRewritten) {
    Simulation simulation =
        run(List.of(new Op.RouteToAnotherPrompt(digestRewritten), ROUTED, new Advance(1_000)));

    assertThat(simulation.served()).as("served, of %s", simulation).isEqualTo(1);
    assertThat(simulation.failed()).isEqualTo(1);
  }

  @Test
  void blockOverwrittenOnTheProducerWhileLeasedIsNeverServed() {
    // D reads the whole blocks by index and the partly filled last block piece by piece, in two
    // READs: both wait while P overwrites one of the blocks, whichever it is.
    Simulation simulation =
        run(
            List.of(
                STALL,
                STALL,
                ROUTED,
                new Op.CorruptHeldBlock(),
                new Unstall(),
                new Advance(1_000)));

    assertThat(simulation.served()).as("served, of %s", simulation).isZero();
    assertThat(simulation.failed()).isEqualTo(1);
  }

  @Test
  void aStreamedRequestIsServedOnceEveryLayerIsComputed() {
    Simulation simulation =
        run(List.of(new StreamedRequest(7, 1, false, false), new Advance(5_000)));

    assertThat(simulation.served()).as("served, of %s", simulation).isEqualTo(1);
    assertThat(simulation.leaseEnds()).containsEntry("r0", EndReason.READ);
  }

  @ParameterizedTest(name = "graceful: {0}")
  @ValueSource(booleans = {true, false})
  void aProducerThatEndsMidStreamServesNothingAndThePairServesAgain(boolean graceful) {
    Simulation simulation =
        run(
            List.of(
                new StreamedRequest(7, 1, false, false),
                new RestartProducer(graceful),
                new Advance(15_000)));

    assertThat(simulation.served()).as("served, of %s", simulation).isEqualTo(1);
    assertThat(simulation.failed()).isEqualTo(1);
    assertThat(simulation.restartsProven()).isEqualTo(1);
  }

  @Test
  void aDecoderKilledMidStreamLeavesNothingHeldOnceTheLeaseExpires() {
    Simulation simulation =
        run(
            List.of(
                new StreamedRequest(7, 1, false, false), new KillDecoder(), new Advance(40_000)));

    assertThat(simulation.served()).as("served, of %s", simulation).isZero();
    assertThat(simulation.leaseEnds()).containsEntry("r0", EndReason.EXPIRED);
  }

  @Test
  void aLoadAbortedOnTheDecoderMidStreamReleasesTheLease() {
    Simulation simulation =
        run(List.of(new StreamedRequest(7, 1, false, false), new AbortOnDecoder()));

    assertThat(simulation.aborted()).isEqualTo(1);
    assertThat(simulation.served()).as("served, of %s", simulation).isZero();
    assertThat(simulation.leaseEnds()).containsEntry("r0", EndReason.RELEASED);
  }

  @Test
  void aRequestAbortedOnTheProducerMidStreamFailsOnTheDecoder() {
    Simulation simulation = run(List.of(new StreamedRequest(7, 1, false, true)));

    assertThat(simulation.served()).as("served, of %s", simulation).isZero();
    assertThat(simulation.failed()).isEqualTo(1);
    assertThat(simulation.failureReasons().get(0)).contains("REVOKED");
    assertThat(simulation.leaseEnds()).containsEntry("r0", EndReason.REVOKED);
  }

  @ParameterizedTest(name = "{0} failed READs")
  @ValueSource(ints = {1, 2})
  void aFailedReadOfAStreamedLayerIsReadOnceMore(int failures) {
    List<Op> schedule = new ArrayList<>();
    schedule.add(new StreamedRequest(7, 0, false, false));
    for (int i = 0; i < failures; i++) {
      schedule.add(new FailNextRead(0, 0));
    }
    schedule.add(new Advance(5_000));
    Simulation simulation = run(schedule);

    assertThat(simulation.served())
        .as("served, of %s", simulation)
        .isEqualTo(failures == 1 ? 1 : 0);
    assertThat(simulation.failed()).isEqualTo(failures == 1 ? 0 : 1);
  }

  @ParameterizedTest(name = "graceful: {0}")
  @ValueSource(booleans = {true, false})
  void restartedProducerServesTheNextRequestWithinOneHandshake(boolean graceful) {
    Simulation simulation =
        run(List.of(ROUTED, new RestartProducer(graceful), ROUTED, new Advance(1_000)));

    assertThat(simulation.restartsProven()).isEqualTo(1);
    assertThat(simulation.served()).as("served, of %s", simulation).isEqualTo(2);
    assertThat(simulation.failed()).isZero();
  }

  @Test
  void killedProducersLoadInFlightFailsAndItsBlocksComeBackOnTheDecoderOnceItMeetsTheNewOne() {
    Simulation simulation =
        run(
            List.of(STALL, ROUTED, new RestartProducer(false), ROUTED),
            rightAfter -> {
              assertThat(rightAfter.failed()).isEqualTo(1);
              assertThat(rightAfter.failureReasons().get(0)).contains("restarted");
              assertThat(rightAfter.decoderFreeBlocks()).isEqualTo(rightAfter.decoderBlocks());
            });

    assertThat(simulation.served()).as("served, of %s", simulation).isEqualTo(1);
  }

  @ParameterizedTest(name = "graceful: {0}")
  @ValueSource(booleans = {true, false})
  void restartedDecoderIsAcceptedByTheProducerAndServed(boolean graceful) {
    Simulation simulation =
        run(List.of(ROUTED, new RestartDecoder(graceful), ROUTED, new Advance(1_000)));

    assertThat(simulation.restartsProven()).isEqualTo(1);
    assertThat(simulation.served()).as("served, of %s", simulation).isEqualTo(2);
  }

  @ParameterizedTest(name = "stale {0}")
  @ValueSource(booleans = {false, true})
  void forgedProducerIsRefusedAndThePairServesTheNextRequest(boolean stale) {
    Simulation simulation =
        run(
            List.of(
                ROUTED,
                new RestartProducer(true),
                ROUTED,
                new ForgeProducer(stale),
                ROUTED,
                new Advance(1_000)));

    assertThat(simulation.restartsProven()).isEqualTo(2);
    assertThat(simulation.served()).as("served, of %s", simulation).isEqualTo(3);
    assertThat(simulation.failureReasons())
        .singleElement()
        .asString()
        .contains("handshake refused as forged")
        .contains(stale ? "stale metadata" : "which belongs to producer prefill");
  }

  @ParameterizedTest(name = "graceful {0}")
  @ValueSource(booleans = {false, true})
  void replayedHandshakeOfTheDecodersEarlierStartIsRefusedAndThePairServesTheNextRequest(
      boolean graceful) {
    Simulation simulation =
        run(
            List.of(
                ROUTED,
                new RestartDecoder(graceful),
                ROUTED,
                new ReplayDecoderHandshake(),
                ROUTED,
                new Advance(1_000)));

    assertThat(simulation.restartsProven()).isEqualTo(2);
    assertThat(simulation.served()).as("served, of %s", simulation).isEqualTo(3);
  }

  @Test
  void loadAbortedOnTheDecoderWhileReadingReleasesTheLeaseBeforeItWouldExpire() {
    Simulation simulation =
        run(
            List.of(STALL, ROUTED, new AbortOnDecoder()),
            rightAfter -> {
              assertThat(rightAfter.producerStatus().leasesEnded())
                  .containsEntry(EndReason.RELEASED, 1L);
              assertThat(rightAfter.producerStatus().liveLeases()).isZero();
              assertThat(rightAfter.decoderFreeBlocks()).isEqualTo(rightAfter.decoderBlocks());
            });

    assertThat(simulation.served()).as("served, of %s", simulation).isZero();
    assertThat(simulation.aborted()).isEqualTo(1);
  }

  @Test
  void loadAbortedOnTheDecoderWhileConfirmingReleasesTheLeaseBeforeItWouldExpire() {
    // The confirmation is held on its way to P: D's load is still confirming when it is cancelled.
    Simulation simulation =
        run(
            List.of(new HoldNotifications(1), ROUTED, new AbortOnDecoder()),
            rightAfter ->
                assertThat(rightAfter.producerStatus().leasesEnded())
                    .containsEntry(EndReason.RELEASED, 1L));

    assertThat(simulation.served()).as("served, of %s", simulation).isZero();
    assertThat(simulation.aborted()).isEqualTo(1);
  }

  @Test
  void handshakeThatTakesTwentySecondsDoesNotStopTheNextRequestBeingServed() {
    // The request whose handshake is slow outlives its lease; the next one is served, its lease
    // judged by the quick exchanges that followed, not by the slow one.
    Simulation simulation =
        run(List.of(new SlowHandshake(20_000), ROUTED, ROUTED, new Advance(1_000)));

    assertThat(simulation.restartsProven()).isEqualTo(1);
    assertThat(simulation.served()).as("served, of %s", simulation).isEqualTo(1);
    assertThat(simulation.failed()).isEqualTo(1);
  }

  @Test
  void silentProducerFailsTheReadOnTheDecoderWithAReasonAndServesAgainAfterwards() {
    Simulation simulation =
        run(
            List.of(
                STALL,
                ROUTED,
                new SilentProducer(12_000),
                new Unstall(),
                ROUTED,
                new Advance(1_000)));

    assertThat(simulation.failed()).isEqualTo(1);
    assertThat(simulation.failureReasons().get(0)).contains("deadline");
    assertThat(simulation.served()).as("served, of %s", simulation).isEqualTo(1);
  }

  // ---------------------------------------------------------------- engines of several ranks

  @Test
  void oneDecoderRanksReadFailingFailsTheWholeLoadAndItsLeaseStillEndsOnce() {
    // D's rank 1 holds heads 2 and 3: it reads them from P's ranks 2 and 3; the second read fails.
    Shape shape = new Shape(4, 4, 2, 8, MemoryOrder.HEAD_MAJOR);
    Simulation simulation =
        run(
            shape,
            List.of(new FailNextRead(1, 1), new NewRequest(13, 0, false, false)),
            rightAfter -> {
              assertThat(rightAfter.failed()).isEqualTo(1);
              assertThat(rightAfter.failureReasons().get(0)).contains("D rank 1 from P rank 3");
              assertThat(rightAfter.decoderFreeBlocks()).isEqualTo(rightAfter.decoderBlocks());
              assertThat(rightAfter.producerStatus().liveLeases()).isEqualTo(1);
            });

    assertThat(simulation.served()).as("served, of %s", simulation).isZero();
    assertThat(simulation.leaseEnds()).isEqualTo(Map.of("r0", EndReason.EXPIRED));
  }

  @Test
  void readStalledOnOneDecoderRankPastTheMaximumLifetimeIsNeverServed() {
    Shape shape = new Shape(2, 4, 4, 2, MemoryOrder.BLOCK_MAJOR);
    Simulation simulation =
        run(
            shape,
            List.of(
                new StallNextRead(3, 0),
                new NewRequest(14, 0, false, false),
                new Advance(35_000),
                new Unstall(),
                new Advance(3_000)));

    assertThat(simulation.served()).as("served, of %s", simulation).isZero();
    assertThat(simulation.failed()).isEqualTo(1);
  }

  @Test
  void decoderHoldingEveryTokenReadsNothingAndTheLeaseEndsReleased() {
    Shape shape = new Shape(2, 4, 4, 8, MemoryOrder.BLOCK_MAJOR);
    Simulation simulation =
        run(
            shape,
            List.of(new NewRequest(10, 10, false, false)),
            rightAfter -> {
              assertThat(rightAfter.leaseEnds()).isEqualTo(Map.of("r0", EndReason.RELEASED));
              assertThat(rightAfter.producerStatus().liveLeases()).isZero();
              assertThat(rightAfter.decoderBytesRead()).isZero();
            });

    assertThat(simulation.heldInFull()).isEqualTo(1);
    assertThat(simulation.served()).as("served, of %s", simulation).isEqualTo(1);
  }

  @Test
  void decoderHoldingAPrefixReadsTheRestFromWholeBlocksOfBothEngines() {
    // Ten tokens held, blocks of 4 on P and 8 on D: the load writes from token 8 to 15.
    Shape shape = new Shape(2, 4, 1, 8, MemoryOrder.HEAD_MAJOR);
    Simulation simulation =
        run(
            shape,
            List.of(new NewRequest(15, 10, false, false)),
            rightAfter ->
                assertThat(rightAfter.decoderBytesRead()).isEqualTo(7L * shape.tokenBytes()));

    assertThat(simulation.partlyLocal()).isEqualTo(1);
    assertThat(simulation.served()).as("served, of %s", simulation).isEqualTo(1);
    assertThat(simulation.leaseEnds()).isEqualTo(Map.of("r0", EndReason.READ));
  }

  @ParameterizedTest(name = "graceful: {0}")
  @ValueSource(booleans = {true, false})
  void producerOfTwoRanksRestartedServesADecoderOfFourWithinOneHandshake(boolean graceful) {
    Shape shape = new Shape(2, 4, 4, 2, MemoryOrder.HEAD_MAJOR);
    Simulation simulation =
        run(
            shape,
            List.of(
                new NewRequest(9, 0, false, false),
                new RestartProducer(graceful),
                new NewRequest(9, 0, false, false),
                new Advance(1_000)));

    assertThat(simulation.restartsProven()).isEqualTo(1);
    assertThat(simulation.served()).as("served, of %s", simulation).isEqualTo(2);
    assertThat(simulation.failed()).isZero();
  }

  // ------------------------------------------------- published models' KV at real size, per layer

  @Test
  void llamaKvInPerLayerTensorsSurvivesAFailedReadAndAProducerRestart() {
    // Llama-3.1-8B: P keeps vLLM's tensor per layer over two ranks, D separate K and V tensors per
    // layer on one rank; D's read from P's rank 1 fails once, then P restarts.
    Shape shape =
        new Shape(
            2,
            4,
            1,
            8,
            MemoryOrder.BLOCK_MAJOR,
            KvLayout.Placement.PER_LAYER,
            KvLayout.Placement.PER_LAYER_PLANE,
            KvModel.LLAMA_3_1_8B);
    Simulation simulation =
        run(
            shape,
            List.of(
                new FailNextRead(0, 1),
                new NewRequest(13, 0, false, false),
                new NewRequest(11, 0, false, false),
                new RestartProducer(false),
                new NewRequest(9, 0, false, false),
                new Advance(35_000)));

    assertThat(simulation.failed()).isEqualTo(1);
    assertThat(simulation.served()).as("served, of %s", simulation).isEqualTo(2);
    assertThat(simulation.restartsProven()).isEqualTo(1);
  }

  @Test
  void deepSeekMlaLatentPerLayerReachesEveryDecoderRankAcrossARestart() {
    // DeepSeek-V3's latent, one tensor per layer, on both of P's ranks and all four of D's.
    Shape shape =
        new Shape(
            2,
            4,
            4,
            2,
            MemoryOrder.HEAD_MAJOR,
            KvLayout.Placement.PER_LAYER_BLOCK_FIRST,
            KvLayout.Placement.PER_LAYER_BLOCK_FIRST,
            KvModel.DEEPSEEK_V3);
    Simulation simulation =
        run(
            shape,
            List.of(
                new NewRequest(10, 0, false, false),
                new RestartProducer(true),
                new NewRequest(7, 4, false, false),
                new Advance(1_000)));

    assertThat(simulation.served()).as("served, of %s", simulation).isEqualTo(2);
    assertThat(simulation.failed()).isZero();
    assertThat(simulation.restartsProven()).isEqualTo(1);
  }

  /** Runs the schedule, lets every lease end, and checks nothing leaked; returns the outcome. */
  private Simulation run(List<Op> schedule) {
    return run(Shape.SINGLE_RANK, schedule, rightAfter -> {});
  }

  private Simulation run(Shape shape, List<Op> schedule) {
    return run(shape, schedule, rightAfter -> {});
  }

  private Simulation run(List<Op> schedule, Consumer<Simulation> rightAfter) {
    return run(Shape.SINGLE_RANK, schedule, rightAfter);
  }

  /**
   * Runs the schedule between engines of {@code shape} and hands the simulation to {@code
   * rightAfter} before simulated time runs on; then lets every lease end and checks nothing leaked.
   */
  private Simulation run(Shape shape, List<Op> schedule, Consumer<Simulation> rightAfter) {
    Simulation simulation = new Simulation(shape, 0, connector::newTransport, connector.patience());
    try {
      simulation.run(schedule);
      rightAfter.accept(simulation);
      simulation.quiesce();
      simulation.checkEverythingEnded();
      return simulation;
    } finally {
      simulation.close();
    }
  }
}
