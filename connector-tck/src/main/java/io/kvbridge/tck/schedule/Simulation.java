package io.kvbridge.tck.schedule;

import io.kvbridge.lease.EndReason;
import io.kvbridge.spi.ProducerStatus;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.tck.faults.Faults;
import io.kvbridge.time.ManualClock;
import io.kvbridge.time.MonotonicClock;
import io.kvbridge.transfer.Transport;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.function.Function;

/**
 * A producer engine and a decode engine of a {@link Shape} (each with one or more tensor-parallel
 * ranks, each rank's KV memory registered through its own worker side and its own transport agent
 * of the connector under test, every agent's backend wrapped in a {@link
 * io.kvbridge.tck.faults.FaultInjectingBackend} of one {@link Faults} group), driven by a schedule
 * of {@link Op}s under an injected clock. After every op and every simulated sweep the engines step
 * until the group is {@linkplain Faults#quiet() quiet} ({@link EnginePair}). The engines behave as
 * real engines would ({@link ProducerEngine}, {@link DecoderEngine}); the {@link Adversary} forges,
 * replays and corrupts; the {@link RequestLedger} records what became of every request and checks
 * how the leases ended.
 *
 * <p>Either engine may restart under its engine id. After a restart the pair must serve again
 * within one handshake: the next request the router forwards is followed, with the group's rules
 * set aside, until it ends; it must be served, and P must have answered at most one handshake for
 * it ({@link ProducerClock} counts them).
 *
 * <p>Every random choice, and every engine's incarnation, is drawn from one source seeded by the
 * clock skew, so a schedule and a skew reproduce the same run.
 */
final class Simulation implements AutoCloseable {

  /** How many settles the request that proves a restart may take to end. */
  private static final int PROOF_SETTLES = 10;

  private final Shape shape;
  private final ManualClock clock = new ManualClock();
  private final RequestLedger ledger = new RequestLedger();
  private final ProducerClock producerClock;
  private final Faults faults;
  private final Random random;
  private final EnginePair engines;
  private final Adversary adversary;
  private String restartToProve; // the last restart, until a forwarded request proved it

  /**
   * @param shape the engines' ranks, block sizes and memory order
   * @param clockSkewMillis how far D's clock is ahead of P's; also seeds every random choice
   * @param transports creates an agent's raw transport from its name
   * @param patience how long the engines may take to settle after one op on an asynchronous
   *     transport
   */
  Simulation(
      Shape shape, int clockSkewMillis, Function<String, Transport> transports, Duration patience) {
    this.shape = shape;
    long skewNanos = Duration.ofMillis(clockSkewMillis).toNanos();
    MonotonicClock decoderClock = () -> clock.nanoTime() + skewNanos;
    long seed = 31L * clockSkewMillis + 7;
    this.faults = new Faults(seed);
    this.random = new Random(seed);
    this.producerClock = new ProducerClock(clock, what -> restartToProve = what);
    EngineStarter starter = new EngineStarter(transports, faults, random);
    this.engines =
        new EnginePair(
            () -> new ProducerEngine(shape, starter, producerClock, clock, random, ledger),
            engineId ->
                new DecoderEngine(
                    engineId, shape, starter, decoderClock, producerClock, random, ledger),
            faults,
            patience);
    this.adversary = new Adversary(shape, engines, clock, random, ledger, this::proveNext);
  }

  int requests() {
    return ledger.requests();
  }

  int routed() {
    return ledger.routed();
  }

  /** Requests D decoded: loaded and checked, or held in full already. */
  int served() {
    return ledger.served();
  }

  int failed() {
    return ledger.failed();
  }

  /** Requests D cancelled ({@link Op.AbortOnDecoder}). */
  int aborted() {
    return ledger.aborted();
  }

  /** Requests D held every token of, and so read nothing for. */
  int heldInFull() {
    return ledger.heldInFull();
  }

  /** Requests D held a prefix of, and loaded the rest of. */
  int partlyLocal() {
    return ledger.partlyLocal();
  }

  /** Restarts after which the pair served the next forwarded request within one handshake. */
  int restartsProven() {
    return ledger.restartsProven();
  }

  /** Why each load that failed or was refused on D did, in the order D learned it. */
  List<String> failureReasons() {
    return ledger.failureReasons();
  }

  /** How each lease that ended on P did, by request, over every incarnation of P. */
  Map<String, EndReason> leaseEnds() {
    return ledger.leaseEnds();
  }

  /** The producer's part of its connector's status, of its current incarnation. */
  ProducerStatus producerStatus() {
    return engines.producer().status();
  }

  /** The bytes D's current incarnation read. */
  long decoderBytesRead() {
    return engines.decoder().status().bytesRead();
  }

  /** How many blocks of D's pool are free now. */
  int decoderFreeBlocks() {
    return engines.decoder().freeBlocks();
  }

  /** How many blocks D's pool has. */
  int decoderBlocks() {
    return shape.decoderBlocks();
  }

  void run(List<Op> schedule) {
    for (Op op : schedule) {
      apply(op);
      if (!(op instanceof Op.Advance)) {
        engines.settle();
      }
    }
  }

  /**
   * Lifts every fault and lets simulated time run until every lease must have ended; then proves
   * the last restart, if no forwarded request did yet.
   */
  void quiesce() {
    faults.clear();
    faults.releaseHeldNotifications();
    faults.unstallReads();
    producerClock.disarmSlowHandshake();
    advance(EngineStarter.MAX_LIFETIME.plus(EngineStarter.LEASE).plusSeconds(5).toMillis());
    if (restartToProve != null) {
      proveServedAfterRestart(1, 0);
    }
  }

  /**
   * Nothing is held, leaked or live on either engine, and every lease ended as the {@link
   * RequestLedger} says it must.
   */
  void checkEverythingEnded() {
    engines.checkEverythingEnded();
    ledger.checkLeaseEnds();
  }

  /** What became of the requests so far, for a failed check. */
  @Override
  public String toString() {
    return ledger.toString();
  }

  @Override
  public void close() {
    adversary.close();
    engines.close();
  }

  private void apply(Op op) {
    if (op instanceof Op.NewRequest r) {
      newRequest(r);
    } else if (op instanceof Op.StreamedRequest r) {
      streamedRequest(r);
    } else if (op instanceof Op.Advance a) {
      advance(a.millis());
    } else if (op instanceof Op.DropNotifications d) {
      faults.dropNextNotifications(d.count());
    } else if (op instanceof Op.HoldNotifications h) {
      faults.holdNextNotifications(h.count());
    } else if (op instanceof Op.ReleaseHeld) {
      faults.releaseHeldNotifications();
    } else if (op instanceof Op.DelayNotifications d) {
      faults.delayNextNotifications(d.count(), d.drains());
    } else if (op instanceof Op.DuplicateNotifications d) {
      faults.duplicateNextNotifications(d.count());
    } else if (op instanceof Op.FailNextRead f) {
      Link link = Link.of(shape, engines.decoderId(), f.decoderRank(), f.source());
      faults.failNextReadsBetween(
          link.decoderAgent(),
          link.producerAgent(),
          1,
          "injected read failure on D rank "
              + link.decoderRank()
              + " from P rank "
              + link.producerRank());
    } else if (op instanceof Op.StallNextRead s) {
      Link link = Link.of(shape, engines.decoderId(), s.decoderRank(), s.source());
      faults.stallNextReadsBetween(link.decoderAgent(), link.producerAgent(), 1);
    } else if (op instanceof Op.Unstall) {
      faults.unstallReads();
    } else if (op instanceof Op.KillDecoder) {
      decoderEnds(false);
      engines.killDecoder();
    } else if (op instanceof Op.RestartProducer r) {
      restartProducer(r.graceful());
      restartToProve = op.toString();
    } else if (op instanceof Op.RestartDecoder r) {
      decoderEnds(r.graceful());
      engines.restartDecoder(r.graceful());
      restartToProve = op.toString();
    } else if (op instanceof Op.AbortOnDecoder) {
      abortOnDecoder();
    } else if (op instanceof Op.SlowHandshake h) {
      decoderEnds(true);
      engines.restartDecoder(true);
      // the restarted D must handshake again
      producerClock.armSlowHandshake(Duration.ofMillis(h.millis()));
    } else if (op instanceof Op.SilentProducer q) {
      engines.silenceProducer(true);
      try {
        advance(q.millis());
      } finally {
        engines.silenceProducer(false);
      }
    } else if (op instanceof Op.ForgeCompletion) {
      adversary.forgeCompletion();
    } else if (op instanceof Op.ReplayCompletion) {
      adversary.replayCompletion();
    } else if (op instanceof Op.ForgeBlockList f) {
      adversary.forgeBlockList(f.variant());
    } else if (op instanceof Op.RouteToAnotherPrompt a) {
      adversary.routeToAnotherPrompt(a.digestRewritten());
    } else if (op instanceof Op.CorruptHeldBlock) {
      adversary.corruptHeldBlock();
    } else if (op instanceof Op.ForgeProducer f) {
      adversary.forgeProducer(f.stale(), op.toString());
    } else if (op instanceof Op.ReplayDecoderHandshake) {
      adversary.replayDecoderHandshake(op.toString());
    } else {
      throw new IllegalArgumentException("unknown op " + op);
    }
  }

  /** The next request the router forwards must be served, as after a restart. */
  private void proveNext(String what) {
    restartToProve = restartToProve == null ? what : restartToProve + " and " + what;
  }

  private void newRequest(Op.NewRequest r) {
    ProducerEngine producer = engines.producer();
    if (restartToProve != null
        && !producerClock.slowHandshakeArmed()
        && !r.routerDrops()
        && !r.abortedOnP()
        && r.localTokens() < r.tokens()
        && producer.hasRoomFor(r.tokens())) {
      proveServedAfterRestart(r.tokens(), r.localTokens());
      return;
    }
    String id = ledger.newRequest();
    producer
        .prefill(id, r.tokens(), r.abortedOnP())
        .ifPresent(
            params -> {
              if (!r.routerDrops()) {
                ledger.recordRouted();
                engines.decoder().accept(id, params, r.localTokens());
              }
            });
  }

  /**
   * P starts a streamed prefill; the router forwards its parameters at once (unless it drops them),
   * and P computes its first layers, the engines settling after each, while D reads what P
   * announced.
   */
  private void streamedRequest(Op.StreamedRequest r) {
    ProducerEngine producer = engines.producer();
    String id = ledger.newRequest();
    Optional<TransferParams> params = producer.startStreamed(id, r.tokens());
    if (params.isEmpty()) {
      return;
    }
    if (!r.routerDrops()) {
      ledger.recordRouted();
      engines.decoder().accept(id, params.get(), 0);
    }
    for (int layer = 0; layer < r.layersNow() && producer.computeLayer(id); layer++) {
      engines.settle();
    }
    if (r.abortedOnP()) {
      producer.abort(id);
    }
  }

  /**
   * After a restart the pair must serve again within one handshake: follows a request of {@code
   * tokens} tokens, {@code localTokens} of them held on D, forwarded by the router, with the
   * group's rules set aside (faults already in effect, held notifications and stalled reads, stay),
   * until it ends; it must have been served, and P must have answered at most one handshake
   * meanwhile.
   */
  private void proveServedAfterRestart(int tokens, int localTokens) {
    String restart = restartToProve;
    restartToProve = null;
    String id = ledger.newRequest();
    int handshakesBefore = producerClock.handshakesAnswered();
    faults.suspendRules();
    try {
      TransferParams params =
          engines
              .producer()
              .prefill(id, tokens, false)
              .orElseThrow(() -> new IllegalStateException("P has no room for " + id));
      ledger.recordRouted();
      engines.decoder().accept(id, params, localTokens);
      for (int i = 0; i < PROOF_SETTLES && engines.decoder().waitsFor(id); i++) {
        engines.settle();
      }
    } finally {
      faults.resumeRules();
    }
    DecoderEngine decoder = engines.decoder();
    if (!decoder.served(id)) {
      throw new AssertionError(
          "after "
              + restart
              + " the pair did not serve the next request, "
              + id
              + ": "
              + (decoder.waitsFor(id)
                  ? "it never ended"
                  : "it failed: " + ledger.lastFailureReason()));
    }
    int handshakes = producerClock.handshakesAnswered() - handshakesBefore;
    if (handshakes > 1) {
      throw new AssertionError(
          "after " + restart + " serving " + id + " took " + handshakes + " handshakes, not one");
    }
    ledger.recordRestartProven();
  }

  /**
   * P's process ends and a new one starts under the same engine id. Leases the old one had not
   * ended can never be acknowledged now: their loads must never be served.
   */
  private void restartProducer(boolean graceful) {
    ProducerEngine old = engines.producer();
    adversary.captureBeforeItEnds(old);
    ledger.recordNeverToBeServed(old.heldBlocks().keySet());
    engines.restartProducer(graceful);
  }

  /**
   * D's process is about to end, gracefully or killed: the requests it waits for end with it; a
   * graceful one gives their leases back as it closes.
   */
  private void decoderEnds(boolean graceful) {
    DecoderEngine old = engines.decoder();
    adversary.captureBeforeItEnds(old);
    List<String> waiting = old.waiting();
    ledger.recordEndedWithDecoder(waiting);
    if (graceful) {
      ledger.recordClosedWithDecoder(waiting);
    }
  }

  private void abortOnDecoder() {
    List<String> waiting = engines.decoder().waiting();
    if (!waiting.isEmpty()) {
      engines.decoder().cancel(waiting.get(random.nextInt(waiting.size())));
    }
  }

  /**
   * Time passes in sweep-sized steps, with the starter's sweeps on schedule; a silent P neither
   * sweeps nor steps, and so frees nothing, until it runs again.
   */
  private void advance(long millis) {
    long left = millis;
    while (left > 0) {
      long chunk = Math.min(left, EnginePair.SWEEP.toMillis());
      clock.advance(Duration.ofMillis(chunk));
      left -= chunk;
      engines.sweep();
      engines.settle();
      engines.checkProducerHoldsNothingTooLong();
      ledger.checkLeaseEnds();
    }
  }
}
