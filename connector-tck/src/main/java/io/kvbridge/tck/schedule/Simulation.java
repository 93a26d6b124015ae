package io.kvbridge.tck.schedule;

import static org.awaitility.Awaitility.await;

import io.kvbridge.lease.EndReason;
import io.kvbridge.lease.LeaseToken;
import io.kvbridge.net.HandshakeAddress;
import io.kvbridge.spi.ProducerStatus;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.tck.Prompts;
import io.kvbridge.tck.faults.Faults;
import io.kvbridge.time.ManualClock;
import io.kvbridge.time.MonotonicClock;
import io.kvbridge.transfer.Transport;
import io.kvbridge.wire.ConsumerHandshake;
import io.kvbridge.wire.Handshake;
import io.kvbridge.wire.HandshakeChannel;
import io.kvbridge.wire.LeaseRef;
import io.kvbridge.wire.ProducerHandshake;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import java.util.function.Function;

/**
 * A producer engine and a decode engine of a {@link Shape} (each with one or more tensor-parallel
 * ranks, each rank's KV memory registered through its own worker side and its own transport agent
 * of the connector under test, every agent's backend wrapped in a {@link
 * io.kvbridge.tck.faults.FaultInjectingBackend} of one {@link Faults} group), driven by a schedule
 * of {@link Op}s under an injected clock. After every op and every simulated sweep the engines step
 * until the group is {@linkplain Faults#quiet() quiet} (at once on a synchronous transport;
 * waiting, bounded by the patience, on an asynchronous one). The engines behave as a real engine
 * would: P frees a request's blocks when {@code doneSending} names it and immediately overwrites
 * them on every rank (as reuse would); D decodes only what {@code doneReceiving} names, after
 * checking, on every rank, every byte of every head and token of the prompt against the KV P
 * computed for it ({@link KvContent}), through each side's layouts. D may hold a prefix of a prompt
 * already: it holds that KV in the blocks before the first token the load writes, and asks for
 * nothing when it holds every token.
 *
 * <p>Either engine may restart under its engine id. After a restart the pair must serve again
 * within one handshake: the next request the router forwards is followed, with the group's rules
 * set aside, until it ends; it must be served, and P must have answered at most one handshake for
 * it. P answers handshakes in this JVM, on the thread of the consumer that asks, and reads its
 * clock once in each answer; nothing else of P's reads P's clock while D's engine is inside its
 * connector. So such a read is P answering a handshake: that is how handshakes are counted, and how
 * one is made slow (the clock runs on while P answers).
 */
final class Simulation implements AutoCloseable {

  static final Duration SWEEP = Duration.ofMillis(500);
  private static final int IMMEDIATE_STEPS = 4;

  /** How many settles the request that proves a restart may take to end. */
  private static final int PROOF_SETTLES = 10;

  private final Shape shape;
  private final ManualClock clock = new ManualClock();
  private final RequestLedger ledger = new RequestLedger();
  private final ProducerClock producerClock;
  private final MonotonicClock decoderClock;
  private final EngineStarter starter;
  private final Duration patience;
  private final Faults faults;
  private final Random random;
  private final List<DecoderEngine> deadDecoders = new ArrayList<>();
  private final List<HandshakeChannel.Server> forgers = new ArrayList<>();
  private ProducerEngine producer;
  private DecoderEngine decoder;
  private int decoderGeneration;
  private boolean producerSilent;
  private String restartToProve; // the last restart, until a forwarded request proved it
  private ProducerEngine.Captured earlierProducer; // the start of P before the current one
  private Handshake.Request earlierDecoder; // the last handshake request of D's previous start

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
    this.decoderClock = () -> clock.nanoTime() + skewNanos;
    long seed = 31L * clockSkewMillis + 7;
    this.patience = patience;
    this.faults = new Faults(seed);
    this.random = new Random(seed);
    this.producerClock = new ProducerClock(clock, what -> restartToProve = what);
    this.starter = new EngineStarter(transports, faults, random);
    this.producer = newProducer();
    this.decoder = newDecoder();
  }

  private ProducerEngine newProducer() {
    return new ProducerEngine(shape, starter, producerClock, clock, random, ledger);
  }

  private DecoderEngine newDecoder() {
    return new DecoderEngine(
        decoderId(), shape, starter, decoderClock, producerClock, random, ledger);
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
    return producer.status();
  }

  /** The bytes D's current incarnation read. */
  long decoderBytesRead() {
    return decoder.status().bytesRead();
  }

  /** How many blocks of D's pool are free now. */
  int decoderFreeBlocks() {
    return decoder.freeBlocks();
  }

  /** How many blocks D's pool has. */
  int decoderBlocks() {
    return shape.decoderBlocks();
  }

  void run(List<Op> schedule) {
    for (Op op : schedule) {
      apply(op);
      if (!(op instanceof Op.Advance)) {
        settle();
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
    producer.checkEverythingEnded();
    decoder.checkEverythingEnded();
    ledger.checkLeaseEnds();
  }

  @Override
  public void close() {
    forgers.forEach(HandshakeChannel.Server::close);
    producer.close();
    decoder.close();
    deadDecoders.forEach(DecoderEngine::close);
  }

  private void apply(Op op) {
    if (op instanceof Op.NewRequest r) {
      newRequest(r);
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
      Link link = Link.of(shape, decoderId(), f.decoderRank(), f.source());
      faults.failNextReadsBetween(
          link.decoderAgent(),
          link.producerAgent(),
          1,
          "injected read failure on D rank "
              + link.decoderRank()
              + " from P rank "
              + link.producerRank());
    } else if (op instanceof Op.StallNextRead s) {
      Link link = Link.of(shape, decoderId(), s.decoderRank(), s.source());
      faults.stallNextReadsBetween(link.decoderAgent(), link.producerAgent(), 1);
    } else if (op instanceof Op.Unstall) {
      faults.unstallReads();
    } else if (op instanceof Op.KillDecoder) {
      endDecoder(false);
      decoderGeneration++;
      decoder = newDecoder();
    } else if (op instanceof Op.RestartProducer r) {
      restartProducer(r.graceful());
      restartToProve = op.toString();
    } else if (op instanceof Op.RestartDecoder r) {
      endDecoder(r.graceful());
      decoder = newDecoder();
      restartToProve = op.toString();
    } else if (op instanceof Op.AbortOnDecoder) {
      abortOnDecoder();
    } else if (op instanceof Op.SlowHandshake h) {
      endDecoder(true);
      decoder = newDecoder();
      // the restarted D must handshake again
      producerClock.armSlowHandshake(Duration.ofMillis(h.millis()));
    } else if (op instanceof Op.SilentProducer q) {
      producerSilent = true;
      try {
        advance(q.millis());
      } finally {
        producerSilent = false;
      }
    } else if (op instanceof Op.ForgeCompletion) {
      forgeCompletion();
    } else if (op instanceof Op.ReplayCompletion) {
      replayCompletion();
    } else if (op instanceof Op.ForgeBlockList f) {
      forgeBlockList(f.variant());
    } else if (op instanceof Op.RouteToAnotherPrompt a) {
      routeToAnotherPrompt(a.digestRewritten());
    } else if (op instanceof Op.CorruptHeldBlock) {
      corruptHeldBlock();
    } else if (op instanceof Op.ForgeProducer f) {
      forgeProducer(f.stale(), op.toString());
    } else if (op instanceof Op.ReplayDecoderHandshake) {
      replayDecoderHandshake(op.toString());
    } else {
      throw new IllegalArgumentException("unknown op " + op);
    }
  }

  /** The next request the router forwards must be served, as after a restart. */
  private void proveNext(String what) {
    restartToProve = restartToProve == null ? what : restartToProve + " and " + what;
  }

  private void newRequest(Op.NewRequest r) {
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
                decoder.accept(id, params, r.localTokens());
              }
            });
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
          producer
              .prefill(id, tokens, false)
              .orElseThrow(() -> new IllegalStateException("P has no room for " + id));
      ledger.recordRouted();
      decoder.accept(id, params, localTokens);
      for (int i = 0; i < PROOF_SETTLES && decoder.waitsFor(id); i++) {
        settle();
      }
    } finally {
      faults.resumeRules();
    }
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
    ProducerEngine old = producer;
    earlierProducer = old.capture();
    ledger.recordNeverToBeServed(old.heldBlocks().keySet());
    if (!graceful) {
      old.agentNames().forEach(faults::kill);
    }
    old.close(); // its held blocks vanish with its memory: neither leaked nor freed
    producer = newProducer();
  }

  /** D's process ends, gracefully or killed: its requests end with it, its memory is lost. */
  private void endDecoder(boolean graceful) {
    DecoderEngine old = decoder;
    earlierDecoder = old.request();
    List<String> waiting = old.waiting();
    ledger.recordFailedWithoutReason(waiting.size());
    if (graceful) {
      ledger.recordClosedWithDecoder(waiting);
      old.close();
    } else {
      old.agentNames().forEach(faults::kill);
      deadDecoders.add(old);
    }
  }

  private String decoderId() {
    return "decode-" + decoderGeneration;
  }

  private void abortOnDecoder() {
    List<String> waiting = decoder.waiting();
    if (!waiting.isEmpty()) {
      decoder.cancel(waiting.get(random.nextInt(waiting.size())));
    }
  }

  /**
   * Time passes in sweep-sized steps, with the starter's sweeps on schedule; a silent P neither
   * sweeps nor steps, and so frees nothing, until it runs again.
   */
  private void advance(long millis) {
    long left = millis;
    while (left > 0) {
      long chunk = Math.min(left, SWEEP.toMillis());
      clock.advance(Duration.ofMillis(chunk));
      left -= chunk;
      // The sweeps also send the heartbeats that are due, every HEARTBEAT.
      if (!producerSilent) {
        producer.sweep();
      }
      decoder.sweep();
      settle();
      if (!producerSilent) {
        producer.checkNothingHeldTooLong();
      }
      ledger.checkLeaseEnds();
    }
  }

  /**
   * Steps both engines until nothing is in flight between them. A synchronous transport settles
   * within a few steps; an asynchronous one is polled, within the patience, as its progress thread
   * moves bytes and messages. A load confirmed by the last step is allocated at the next one, as by
   * an engine that keeps stepping: while D still asks about a request, one more step follows.
   */
  private void settle() {
    awaitQuiet();
    if (decoder.stillAsking()) {
      step();
      awaitQuiet();
    }
  }

  private void awaitQuiet() {
    for (int i = 0; i < IMMEDIATE_STEPS; i++) {
      step();
      if (quiet()) {
        return;
      }
    }
    await("engines settle")
        .atMost(patience)
        .pollInSameThread()
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(1))
        .until(
            () -> {
              step();
              return quiet();
            });
  }

  /**
   * Whether nothing moves; what waits for a silent P to drain it does not count (D's messages go to
   * P's lead rank, the only one that drains any).
   */
  private boolean quiet() {
    return producerSilent ? faults.quietExceptTowards(ProducerEngine.ID) : faults.quiet();
  }

  private void step() {
    if (!producerSilent) {
      producer.step();
    }
    decoder.step();
  }

  /** See {@link Op.ForgeBlockList}. */
  private void forgeBlockList(int variant) {
    String id = ledger.newRequest();
    int tokens = 3 * shape.producerBlockTokens() - 1;
    producer
        .prefill(id, tokens, false)
        .ifPresent(
            params -> {
              ledger.recordRouted();
              List<Integer> own = params.blockIds();
              List<Integer> forged =
                  switch (variant) {
                    case 0 ->
                        producer.heldBlocks().entrySet().stream()
                            .filter(e -> !e.getKey().equals(id))
                            .map(Map.Entry::getValue)
                            .filter(blocks -> blocks.size() == own.size())
                            .findFirst()
                            .orElse(List.of(own.get(1), own.get(2), own.get(0)));
                    case 1 -> {
                      List<Integer> free = producer.freeBlocks();
                      yield free.subList(0, Math.min(3, free.size()));
                    }
                    case 2 -> List.of(own.get(2), own.get(1), own.get(0));
                    case 3 -> own.stream().map(b -> (b + 1) % Shape.PRODUCER_BLOCKS).toList();
                    default -> List.of(own.get(0), own.get(0), own.get(0));
                  };
              if (forged.size() != own.size()) {
                forged = List.of(own.get(0), own.get(0), own.get(0));
              }
              decoder.acceptNeverToBeServed(
                  id,
                  altered(
                      params,
                      "block_ids",
                      forged,
                      "block_checksums",
                      producer.checksumsHex(forged, tokens, params.checksumScheme())),
                  Prompts.of(id, tokens));
            });
  }

  /** See {@link Op.RouteToAnotherPrompt}. */
  private void routeToAnotherPrompt(boolean digestRewritten) {
    String id = ledger.newRequest();
    producer
        .prefill(id, 1 + random.nextInt(3 * shape.producerBlockTokens()), false)
        .ifPresent(
            params -> {
              ledger.recordRouted();
              TokenIds other = Prompts.of(id + "/another", params.tokens() + 1);
              TransferParams routed =
                  digestRewritten
                      ? altered(params, "prompt_digest", other.digest(params.tokens()))
                      : params;
              decoder.acceptNeverToBeServed(id, routed, other);
            });
  }

  /** See {@link Op.ForgeProducer}. */
  private void forgeProducer(boolean stale, String op) {
    if (!pairHandshaken()) {
      return; // whoever answers first for an agent D does not know yet is trusted
    }
    String id = ledger.newRequest();
    boolean earlierStart = stale && earlierProducer != null;
    ProducerEngine.Captured answer = earlierStart ? earlierProducer : producer.capture();
    String engineId = earlierStart ? ProducerEngine.ID : "impostor-" + ledger.requests();
    producer
        .prefill(id, 1 + random.nextInt(3 * shape.producerBlockTokens()), false)
        .ifPresent(
            params -> {
              ledger.recordRouted();
              decoder.acceptNeverToBeServed(
                  id,
                  altered(
                      params,
                      "producer_engine_id",
                      engineId,
                      "producer_incarnation",
                      HexFormat.of().toHexDigits(answer.incarnation()),
                      "handshake_address",
                      forger(engineId, answer)),
                  Prompts.of(id, params.tokens()));
              proveNext(op);
            });
  }

  /** See {@link Op.ReplayDecoderHandshake}. */
  private void replayDecoderHandshake(String op) {
    Handshake.Request captured = earlierDecoder;
    if (captured == null || !captured.consumerEngineId().equals(decoderId()) || !pairHandshaken()) {
      return; // P may not know that a later start of D exists
    }
    HandshakeAddress address = HandshakeAddress.parse("local://" + ProducerEngine.ID);
    Handshake.Response answer;
    try {
      answer =
          ConsumerHandshake.run(
                  HandshakeChannel.forAddress(address),
                  address,
                  captured,
                  Optional.empty(),
                  Duration.ofSeconds(5),
                  System::nanoTime)
              .response();
    } catch (IOException e) {
      throw new AssertionError("P did not answer a replayed handshake: " + e.getMessage(), e);
    }
    if (!(answer instanceof Handshake.Refused)) {
      throw new AssertionError(
          "P accepted the replayed handshake of incarnation "
              + Long.toHexString(captured.consumerIncarnation())
              + " of "
              + captured.consumerEngineId()
              + ", an earlier start than the live one");
    }
    proveNext(op);
  }

  /**
   * Whether the current starts of P and D completed a handshake: D lists P's current incarnation
   * among its peers (D learns it from P's answer, which P gives after it loaded D's agent).
   */
  private boolean pairHandshaken() {
    long current = producer.incarnation();
    return decoder.status().producers().stream()
        .anyMatch(p -> p.engineId().equals(ProducerEngine.ID) && p.incarnation() == current);
  }

  /**
   * Answers every handshake at an address of its own as {@code engineId} with {@code answer}'s
   * incarnation and ranks; stops when the simulation closes. Reads no engine's clock.
   */
  private String forger(String engineId, ProducerEngine.Captured answer) {
    HandshakeAddress at = HandshakeAddress.parse("local://forged-" + UUID.randomUUID());
    HandshakeChannel.Responder responder =
        new ProducerHandshake(
            Optional.empty(),
            request ->
                new Handshake.Accepted(
                    engineId, answer.incarnation(), clock.nanoTime(), answer.ranks()),
            ProducerHandshake.Listener.NONE);
    try {
      HandshakeChannel.Server server =
          HandshakeChannel.forAddress(at).serve(at, engineId, responder);
      forgers.add(server);
      return server.address().toString();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** See {@link Op.CorruptHeldBlock}. */
  private void corruptHeldBlock() {
    List<List<Integer>> held = new ArrayList<>(producer.heldBlocks().values());
    if (held.isEmpty()) {
      return;
    }
    List<Integer> blocks = held.get(random.nextInt(held.size()));
    int rank = random.nextInt(shape.producerTp());
    byte[] junk = new byte[shape.producerLayouts().get(rank).blockBytes()];
    random.nextBytes(junk);
    producer.overwriteBlock(rank, blocks.get(random.nextInt(blocks.size())), junk);
  }

  /** See {@link Op.ForgeCompletion}. */
  private void forgeCompletion() {
    List<String> live = new ArrayList<>(producer.heldBlocks().keySet());
    if (live.isEmpty()) {
      return;
    }
    String victim = live.get(random.nextInt(live.size()));
    decoder.sendCompletion(new LeaseRef(victim, LeaseToken.random().value()));
  }

  /** See {@link Op.ReplayCompletion}. */
  private void replayCompletion() {
    List<TransferParams> finished = decoder.finishedParams();
    if (finished.isEmpty()) {
      return;
    }
    TransferParams params = finished.get(random.nextInt(finished.size()));
    decoder.sendCompletion(new LeaseRef(params.requestId(), params.leaseToken()));
  }

  private static TransferParams altered(TransferParams params, Object... keysAndValues) {
    Map<String, Object> map = new HashMap<>(params.toMap());
    for (int i = 0; i < keysAndValues.length; i += 2) {
      map.put((String) keysAndValues[i], keysAndValues[i + 1]);
    }
    return TransferParams.fromMap(map);
  }
}
