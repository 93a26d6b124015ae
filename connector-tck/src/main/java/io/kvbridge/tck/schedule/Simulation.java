package io.kvbridge.tck.schedule;

import static org.awaitility.Awaitility.await;

import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.lease.EndReason;
import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.lease.LeaseToken;
import io.kvbridge.runtime.PullConnector;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.FinishDecision;
import io.kvbridge.spi.FinishedRequest;
import io.kvbridge.spi.FinishedTransfers;
import io.kvbridge.spi.InvalidTransferParamsException;
import io.kvbridge.spi.LoadFailure;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.ProducerStatus;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.tck.Messages;
import io.kvbridge.tck.Prompts;
import io.kvbridge.tck.faults.FaultInjectingTransport;
import io.kvbridge.tck.faults.Faults;
import io.kvbridge.time.ManualClock;
import io.kvbridge.time.MonotonicClock;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.Transport;
import io.kvbridge.wire.LeaseRef;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A producer engine and a decode engine over transports of the connector under test, each wrapped
 * in a {@link FaultInjectingTransport} of one {@link Faults} group, driven by a schedule of {@link
 * Op}s under an injected clock. After every op and every simulated sweep the engines step until the
 * group is {@linkplain Faults#quiet() quiet} (at once on a synchronous transport; waiting, bounded
 * by the patience, on an asynchronous one). The engines behave as a real engine would: P frees a
 * request's blocks when {@code doneSending} names it and immediately overwrites them (as reuse
 * would); D decodes only what {@code doneReceiving} names, after checking every byte against what P
 * wrote.
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

  static final KvLayout LAYOUT = KvLayout.opaque("schedule/fp8", 4, 64, 48);
  static final Duration LEASE = Duration.ofSeconds(10);
  static final Duration MAX_LIFETIME = Duration.ofSeconds(30);
  static final Duration HEARTBEAT = Duration.ofSeconds(3);
  static final Duration SWEEP = Duration.ofMillis(500);
  static final Duration SAFETY_MARGIN = Duration.ofSeconds(1);
  static final Duration REPLY_TIMEOUT = Duration.ofSeconds(2);
  private static final int IMMEDIATE_STEPS = 4;

  /** How many settles the request that proves a restart may take to end. */
  private static final int PROOF_SETTLES = 10;

  private final ManualClock clock = new ManualClock();
  private final MonotonicClock producerClock = this::readProducerClock;
  private final MonotonicClock decoderClock;
  private final Function<String, Transport> transports;
  private final Duration patience;
  private final Faults faults;
  private final Random random;
  private final Map<String, byte[][]> written = new HashMap<>();
  private final Set<String> mustNotBeServed = new HashSet<>();
  private final List<String> failureReasons = new ArrayList<>();
  private final List<DecoderEngine> deadDecoders = new ArrayList<>();
  private ProducerEngine producer;
  private DecoderEngine decoder;
  private int decoderGeneration;
  private boolean insideDecoder; // D's engine is inside a call into its connector
  private boolean producerSilent;
  private int handshakesAnswered;
  private Duration slowHandshake; // how long P's answer to the next handshake takes, if armed
  private String restartToProve; // the last restart, until a forwarded request proved it
  private int nextRequest;
  private int requests;
  private int routed;
  private int served;
  private int failed;
  private int aborted;

  // Loads a decoder still held when it shut down gracefully: it releases their leases as it closes.
  private int releasedByClosedDecoders;
  private long releasedByFormerProducers;
  private int restartsProven;

  /**
   * @param transports creates an agent's raw transport from its name
   * @param patience how long the engines may take to settle after one op on an asynchronous
   *     transport
   */
  Simulation(int clockSkewMillis, Function<String, Transport> transports, Duration patience) {
    long skewNanos = Duration.ofMillis(clockSkewMillis).toNanos();
    this.decoderClock = () -> clock.nanoTime() + skewNanos;
    long seed = 31L * clockSkewMillis + 7;
    this.transports = transports;
    this.patience = patience;
    this.faults = new Faults(seed);
    this.random = new Random(seed);
    this.producer = new ProducerEngine();
    this.decoder = new DecoderEngine(decoderId());
  }

  int requests() {
    return requests;
  }

  int routed() {
    return routed;
  }

  int served() {
    return served;
  }

  int failed() {
    return failed;
  }

  /** Requests D cancelled ({@link Op.AbortOnDecoder}). */
  int aborted() {
    return aborted;
  }

  /** Restarts after which the pair served the next forwarded request within one handshake. */
  int restartsProven() {
    return restartsProven;
  }

  /** Why each load that failed or was refused on D did, in the order D learned it. */
  List<String> failureReasons() {
    return List.copyOf(failureReasons);
  }

  /** The producer's part of its connector's status, of its current incarnation. */
  ProducerStatus producerStatus() {
    return producer.connector.status().producer().orElseThrow();
  }

  /** How many blocks of D's pool are free now. */
  int decoderFreeBlocks() {
    return decoder.free.size();
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
    slowHandshake = null;
    advance(MAX_LIFETIME.plus(LEASE).plusSeconds(5).toMillis());
    if (restartToProve != null) {
      proveServedAfterRestart(1);
    }
  }

  void checkEverythingEnded() {
    if (!producer.held.isEmpty()) {
      throw new AssertionError("P still holds blocks of " + producer.held.keySet());
    }
    if (producer.free.size() != LAYOUT.blockCount()) {
      throw new AssertionError(
          "P leaked " + (LAYOUT.blockCount() - producer.free.size()) + " blocks");
    }
    int liveLeases = producer.connector.status().producer().orElseThrow().liveLeases();
    if (liveLeases != 0) {
      throw new AssertionError("P has live leases: " + liveLeases);
    }
    if (!decoder.pending.isEmpty() || !decoder.asking.isEmpty()) {
      throw new AssertionError(
          "requests never ended on D: " + decoder.pending.keySet() + decoder.asking.keySet());
    }
    if (decoder.free.size() != LAYOUT.blockCount()) {
      throw new AssertionError(
          "D leaked " + (LAYOUT.blockCount() - decoder.free.size()) + " blocks");
    }
    long released = releasedByFormerProducers + released(producer);
    if (released > aborted + releasedByClosedDecoders) {
      throw new AssertionError(
          "P ended "
              + released
              + " leases RELEASED, but D cancelled only "
              + aborted
              + " loads and gave back "
              + releasedByClosedDecoders
              + " as it shut down");
    }
  }

  private static long released(ProducerEngine engine) {
    return engine
        .connector
        .status()
        .producer()
        .orElseThrow()
        .leasesEnded()
        .getOrDefault(EndReason.RELEASED, 0L);
  }

  @Override
  public void close() {
    producer.close();
    decoder.close();
    deadDecoders.forEach(DecoderEngine::close);
  }

  /** P's clock; see the class comment for what a read of it while D runs means. */
  private long readProducerClock() {
    if (insideDecoder) {
      handshakesAnswered++;
      if (slowHandshake != null) {
        clock.advance(slowHandshake);
        restartToProve = "a handshake that took " + slowHandshake.toMillis() + " ms";
        slowHandshake = null;
      }
    }
    return clock.nanoTime();
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
    } else if (op instanceof Op.FailNextRead) {
      faults.failNextReads(1, "injected read failure");
    } else if (op instanceof Op.StallNextRead) {
      faults.stallNextReads(1);
    } else if (op instanceof Op.Unstall) {
      faults.unstallReads();
    } else if (op instanceof Op.KillDecoder) {
      endDecoder(false);
      decoderGeneration++;
      decoder = new DecoderEngine(decoderId());
    } else if (op instanceof Op.RestartProducer r) {
      restartProducer(r.graceful());
      restartToProve = op.toString();
    } else if (op instanceof Op.RestartDecoder r) {
      endDecoder(r.graceful());
      decoder = new DecoderEngine(decoderId());
      restartToProve = op.toString();
    } else if (op instanceof Op.AbortOnDecoder) {
      abortOnDecoder();
    } else if (op instanceof Op.SlowHandshake h) {
      endDecoder(true);
      decoder = new DecoderEngine(decoderId());
      slowHandshake = Duration.ofMillis(h.millis()); // the restarted D must handshake again
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
    } else {
      throw new IllegalArgumentException("unknown op " + op);
    }
  }

  private void forgeBlockList(int variant) {
    String id = "r" + nextRequest++;
    requests++;
    producer
        .prefill(id, 3, false)
        .ifPresent(
            params -> {
              routed++;
              List<Integer> own = params.blockIds();
              List<Integer> forged =
                  switch (variant) {
                    case 0 ->
                        producer.held.entrySet().stream()
                            .filter(e -> !e.getKey().equals(id))
                            .map(e -> e.getValue().blocks)
                            .filter(blocks -> blocks.size() == own.size())
                            .findFirst()
                            .orElse(List.of(own.get(1), own.get(2), own.get(0)));
                    case 1 ->
                        List.copyOf(producer.free).subList(0, Math.min(3, producer.free.size()));
                    case 2 -> List.of(own.get(2), own.get(1), own.get(0));
                    case 3 -> own.stream().map(b -> (b + 1) % LAYOUT.blockCount()).toList();
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
                      producer.checksumsHex(forged)),
                  Prompts.of(id, params.tokens() + 1));
            });
  }

  private void routeToAnotherPrompt(boolean digestRewritten) {
    String id = "r" + nextRequest++;
    requests++;
    producer
        .prefill(id, 1 + random.nextInt(3), false)
        .ifPresent(
            params -> {
              routed++;
              TokenIds other = Prompts.of(id + "/another", params.tokens() + 1);
              TransferParams routed =
                  digestRewritten
                      ? altered(params, "prompt_digest", other.digest(params.tokens()))
                      : params;
              decoder.acceptNeverToBeServed(id, routed, other);
            });
  }

  private void corruptHeldBlock() {
    List<Held> held = new ArrayList<>(producer.held.values());
    if (held.isEmpty()) {
      return;
    }
    List<Integer> blocks = held.get(random.nextInt(held.size())).blocks;
    byte[] junk = new byte[LAYOUT.blockBytes()];
    random.nextBytes(junk);
    writeBlock(producer.memory, blocks.get(random.nextInt(blocks.size())), junk);
  }

  private static TransferParams altered(TransferParams params, Object... keysAndValues) {
    Map<String, Object> map = new HashMap<>(params.toMap());
    for (int i = 0; i < keysAndValues.length; i += 2) {
      map.put((String) keysAndValues[i], keysAndValues[i + 1]);
    }
    return TransferParams.fromMap(map);
  }

  private void newRequest(Op.NewRequest r) {
    if (restartToProve != null
        && slowHandshake == null
        && !r.routerDrops()
        && !r.abortedOnP()
        && producer.free.size() >= r.blocks()) {
      proveServedAfterRestart(r.blocks());
      return;
    }
    String id = "r" + nextRequest++;
    requests++;
    producer
        .prefill(id, r.blocks(), r.abortedOnP())
        .ifPresent(
            params -> {
              if (!r.routerDrops()) {
                routed++;
                decoder.accept(id, params);
              }
            });
  }

  /**
   * After a restart the pair must serve again within one handshake: follows a request of {@code
   * blocks} blocks, forwarded by the router, with the group's rules set aside (faults already in
   * effect, held notifications and stalled reads, stay), until it ends; it must have been served,
   * and P must have answered at most one handshake meanwhile.
   */
  private void proveServedAfterRestart(int blocks) {
    String restart = restartToProve;
    restartToProve = null;
    String id = "r" + nextRequest++;
    requests++;
    int handshakesBefore = handshakesAnswered;
    faults.suspendRules();
    try {
      TransferParams params =
          producer
              .prefill(id, blocks, false)
              .orElseThrow(() -> new IllegalStateException("P has no room for " + id));
      routed++;
      decoder.accept(id, params);
      for (int i = 0; i < PROOF_SETTLES && decoder.waitsFor(id); i++) {
        settle();
      }
    } finally {
      faults.resumeRules();
    }
    if (!decoder.servedIds.contains(id)) {
      throw new AssertionError(
          "after "
              + restart
              + " the pair did not serve the next request, "
              + id
              + ": "
              + (decoder.waitsFor(id) ? "it never ended" : "it failed: " + lastFailureReason()));
    }
    int handshakes = handshakesAnswered - handshakesBefore;
    if (handshakes > 1) {
      throw new AssertionError(
          "after " + restart + " serving " + id + " took " + handshakes + " handshakes, not one");
    }
    restartsProven++;
  }

  private String lastFailureReason() {
    return failureReasons.isEmpty() ? "?" : failureReasons.get(failureReasons.size() - 1);
  }

  /**
   * P's process ends and a new one starts under the same engine id. Leases the old one had not
   * ended can never be acknowledged now: their loads must never be served.
   */
  private void restartProducer(boolean graceful) {
    ProducerEngine old = producer;
    mustNotBeServed.addAll(old.held.keySet());
    releasedByFormerProducers += released(old);
    if (!graceful) {
      faults.kill(old.transport.agentName());
    }
    old.close(); // its held blocks vanish with its memory: neither leaked nor freed
    producer = new ProducerEngine();
  }

  /** D's process ends, gracefully or killed: its requests end with it, its memory is lost. */
  private void endDecoder(boolean graceful) {
    DecoderEngine old = decoder;
    failed += old.pending.size() + old.asking.size();
    if (graceful) {
      releasedByClosedDecoders += old.pending.size() + old.asking.size();
      old.close();
    } else {
      faults.kill(old.transport.agentName());
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
        producer.connector.worker().sweep();
      }
      decoder.sweep();
      settle();
      if (!producerSilent) {
        producer.checkNothingHeldTooLong();
      }
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
    if (!decoder.asking.isEmpty()) {
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

  /** Whether nothing moves; what waits for a silent P to drain it does not count. */
  private boolean quiet() {
    return producerSilent
        ? faults.quietExceptTowards(producer.transport.agentName())
        : faults.quiet();
  }

  private void step() {
    if (!producerSilent) {
      producer.step();
    }
    decoder.step();
  }

  private void forgeCompletion() {
    List<String> live = new ArrayList<>(producer.held.keySet());
    if (live.isEmpty()) {
      return;
    }
    String victim = live.get(random.nextInt(live.size()));
    decoder.sendCompletion(new LeaseRef(victim, LeaseToken.random().value()));
  }

  private void replayCompletion() {
    if (decoder.finishedParams.isEmpty()) {
      return;
    }
    TransferParams params =
        decoder.finishedParams.get(random.nextInt(decoder.finishedParams.size()));
    decoder.sendCompletion(new LeaseRef(params.requestId(), params.leaseToken()));
  }

  /** An engine's settings; every start draws a new incarnation, from the seeded source. */
  private ConnectorSettings settings(String engineId, Role role, MonotonicClock engineClock) {
    return ConnectorSettings.builder("schedule", engineId)
        .role(role)
        .leaseTerms(new LeaseTerms(LEASE, MAX_LIFETIME))
        .heartbeatInterval(HEARTBEAT)
        .safetyMargin(SAFETY_MARGIN)
        .replyTimeout(REPLY_TIMEOUT)
        .incarnation(random.nextLong())
        .clock(engineClock)
        .build();
  }

  private static byte[] readBlock(KvMemory memory, int block) {
    byte[] bytes = new byte[LAYOUT.blockBytes()];
    memory.read((long) block * LAYOUT.blockBytes(), ByteBuffer.wrap(bytes));
    return bytes;
  }

  private static void writeBlock(KvMemory memory, int block, byte[] bytes) {
    memory.write((long) block * LAYOUT.blockBytes(), ByteBuffer.wrap(bytes));
  }

  /**
   * The prefill engine, always engine id {@code prefill}: a block pool, the KV it wrote, and when
   * each held request was granted.
   */
  private final class ProducerEngine {
    final FaultInjectingTransport transport = faults.decorate(transports.apply("prefill"));
    final PullConnector connector =
        new PullConnector(settings("prefill", Role.PRODUCER, producerClock), transport);
    final KvMemory memory = connector.worker().allocateKvCache(LAYOUT);
    final Deque<Integer> free = new ArrayDeque<>();
    final Map<String, Held> held = new LinkedHashMap<>();

    ProducerEngine() {
      connector.worker().registerKvCache(memory, LAYOUT);
      for (int b = 0; b < LAYOUT.blockCount(); b++) {
        free.add(b);
      }
    }

    java.util.Optional<TransferParams> prefill(String id, int blocks, boolean aborted) {
      if (free.size() < blocks) {
        failed++; // P refuses the request: it ends at once with an error.
        return java.util.Optional.empty();
      }
      List<Integer> ids = new ArrayList<>();
      byte[][] kv = new byte[blocks][LAYOUT.blockBytes()];
      for (int i = 0; i < blocks; i++) {
        int block = free.poll();
        ids.add(block);
        random.nextBytes(kv[i]);
        writeBlock(memory, block, kv[i]);
      }
      written.put(id, kv);
      FinishDecision decision =
          connector
              .scheduler()
              .requestFinished(
                  new FinishedRequest(
                      id,
                      ids,
                      Prompts.of(id, blocks * LAYOUT.tokensPerBlock() + 1),
                      blocks * LAYOUT.tokensPerBlock() + 1,
                      false,
                      true));
      if (!decision.delayFree()) {
        throw new AssertionError(
            "a finished request with computed tokens must be held for D: " + id);
      }
      held.put(id, new Held(ids, clock.nanoTime()));
      if (aborted) {
        connector.scheduler().revoke(id, "client aborted");
      }
      return decision.params();
    }

    void step() {
      FinishedTransfers finished = connector.worker().getFinished(Set.of());
      for (String id : finished.doneSending()) {
        Held h = held.remove(id);
        if (h == null) {
          throw new AssertionError(
              "doneSending named " + id + ", which holds no blocks: a double free");
        }
        for (int block : h.blocks) {
          if (free.contains(block)) {
            throw new AssertionError("block " + block + " of " + id + " freed twice");
          }
          free.add(block);
          byte[] junk = new byte[LAYOUT.blockBytes()];
          random.nextBytes(junk);
          writeBlock(memory, block, junk); // as the next request reusing the block would
        }
      }
    }

    /** The checksums P's memory gives {@code blocks} now, in transfer-parameter form. */
    List<String> checksumsHex(List<Integer> blocks) {
      StringBuilder hex = new StringBuilder();
      for (int block : blocks) {
        int crc =
            ChecksumScheme.CRC32C.checksum(
                memory, (long) block * LAYOUT.blockBytes(), LAYOUT.blockBytes());
        hex.append(java.util.HexFormat.of().toHexDigits(crc));
      }
      return List.of(hex.toString());
    }

    void checkNothingHeldTooLong() {
      long limit = MAX_LIFETIME.plus(SWEEP).toNanos();
      for (Map.Entry<String, Held> e : held.entrySet()) {
        if (clock.nanoTime() - e.getValue().since > limit) {
          throw new AssertionError("P holds " + e.getKey() + " past max lifetime plus one sweep");
        }
      }
    }

    /**
     * Closes the connector: gracefully, its leases are revoked. A killed engine's connector only
     * unbinds its handshake address, as the end of its process would: its transport is dead, so
     * nothing it does reaches anyone.
     */
    void close() {
      try {
        connector.close();
      } catch (RuntimeException deadAgent) {
        // A killed engine's transport is already gone.
      }
      memory.close();
    }
  }

  /**
   * The decode engine: a block pool and the loads it waits for. Its calls into its connector are
   * marked, so that P's clock read meanwhile counts as a handshake answered.
   */
  private final class DecoderEngine {
    final FaultInjectingTransport transport;
    final PullConnector connector;
    final KvMemory memory;
    final Deque<Integer> free = new ArrayDeque<>();
    final Map<String, List<Integer>> pending = new LinkedHashMap<>();
    final Map<String, Asking> asking = new LinkedHashMap<>();
    final Map<String, TransferParams> paramsOf = new HashMap<>();
    final List<TransferParams> finishedParams = new ArrayList<>();
    final Set<String> servedIds = new HashSet<>();
    final Set<String> cancelled = new HashSet<>();

    DecoderEngine(String engineId) {
      transport = faults.decorate(transports.apply(engineId));
      connector = new PullConnector(settings(engineId, Role.CONSUMER, decoderClock), transport);
      memory = connector.worker().allocateKvCache(LAYOUT);
      connector.worker().registerKvCache(memory, LAYOUT);
      for (int b = 0; b < LAYOUT.blockCount(); b++) {
        free.add(b);
      }
    }

    void accept(String id, TransferParams params) {
      accept(id, params, Prompts.of(id, params.tokens() + 1));
    }

    /** Accepts parameters that do not belong to this request's prompt or blocks: never served. */
    void acceptNeverToBeServed(String id, TransferParams params, TokenIds prompt) {
      mustNotBeServed.add(id);
      accept(id, params, prompt);
    }

    private void accept(String id, TransferParams params, TokenIds prompt) {
      asking.put(id, new Asking(params, prompt));
      ask(id);
    }

    /** Asks the connector about a request, as an engine's scheduler does every step until ready. */
    private void ask(String id) {
      Asking a = asking.get(id);
      LoadMatch match;
      try {
        match = inConnector(() -> connector.scheduler().matchRemote(id, a.prompt(), 0, a.params()));
      } catch (InvalidTransferParamsException e) {
        asking.remove(id);
        failureReasons.add(e.getMessage());
        failed++;
        return;
      }
      if (match instanceof LoadMatch.Unavailable unavailable) {
        asking.remove(id);
        finishedParams.add(a.params());
        failureReasons.add(unavailable.reason());
        failed++;
      } else if (match instanceof LoadMatch.Ready) {
        asking.remove(id);
        List<Integer> blocks = new ArrayList<>();
        while (blocks.size() < a.params().blockIds().size() && !free.isEmpty()) {
          blocks.add(free.poll());
        }
        pending.put(id, blocks);
        paramsOf.put(id, a.params());
        inConnector(
            () -> {
              connector.scheduler().afterAllocate(id, blocks);
              return null;
            });
      }
    }

    /** Whether D still waits for {@code id}: asking about it, or holding blocks for its load. */
    boolean waitsFor(String id) {
      return asking.containsKey(id) || pending.containsKey(id);
    }

    /** The requests D waits for, in the order it took them. */
    List<String> waiting() {
      List<String> ids = new ArrayList<>(asking.keySet());
      ids.addAll(pending.keySet());
      return ids;
    }

    /**
     * The client went away: D cancels the load in whatever state it is and frees its blocks at
     * once, as {@code cancelLoad} allows. The connector must report nothing about it afterwards.
     */
    void cancel(String id) {
      if (!inConnector(() -> connector.scheduler().cancelLoad(id, "client aborted on D"))) {
        throw new AssertionError("D's connector did not know the load of " + id + " D waits for");
      }
      cancelled.add(id);
      aborted++;
      asking.remove(id);
      paramsOf.remove(id);
      List<Integer> blocks = pending.remove(id);
      if (blocks != null) {
        free.addAll(blocks);
        if (new HashSet<>(free).size() != free.size()) {
          throw new AssertionError("D freed a block twice cancelling " + id);
        }
      }
    }

    void sweep() {
      inConnector(
          () -> {
            connector.worker().sweep();
            return null;
          });
    }

    void step() {
      inConnector(
          () -> {
            stepInConnector();
            return null;
          });
    }

    private void stepInConnector() {
      for (String id : List.copyOf(asking.keySet())) {
        ask(id);
      }
      connector.worker().startLoad(connector.scheduler().buildStepMetadata());
      FinishedTransfers finished = connector.worker().getFinished(Set.of());
      for (String id : finished.doneReceiving()) {
        if (cancelled.contains(id)) {
          throw new AssertionError("request " + id + " was reported received after D cancelled it");
        }
        if (mustNotBeServed.contains(id)) {
          throw new AssertionError(
              "request "
                  + id
                  + " was served from a forged block list, another prompt's KV, or a lease that"
                  + " ended with its producer's process");
        }
        List<Integer> blocks = end(id);
        byte[][] expected = written.get(id);
        for (int i = 0; i < blocks.size(); i++) {
          if (!Arrays.equals(readBlock(memory, blocks.get(i)), expected[i])) {
            throw new AssertionError(
                "request " + id + " was reported received with corrupted block " + i);
          }
        }
        servedIds.add(id);
        served++;
      }
      for (LoadFailure failure : finished.failedLoads()) {
        if (cancelled.contains(failure.requestId())) {
          throw new AssertionError(
              "request " + failure.requestId() + " was reported failed after D cancelled it");
        }
        end(failure.requestId());
        failureReasons.add(failure.reason());
        failed++;
      }
    }

    private List<Integer> end(String id) {
      List<Integer> blocks = pending.remove(id);
      if (blocks == null) {
        throw new AssertionError("D was told twice that " + id + " ended");
      }
      free.addAll(blocks);
      finishedParams.add(paramsOf.remove(id));
      Set<Integer> distinct = new HashSet<>(free);
      if (distinct.size() != free.size()) {
        throw new AssertionError("D freed a block twice ending " + id);
      }
      return blocks;
    }

    void sendCompletion(LeaseRef lease) {
      try {
        transport.notify(
            producer.transport.agentName(),
            Messages.completion(lease, connector.settings().engineId()));
      } catch (RuntimeException unreachable) {
        // D never handshook with P yet: the forged message cannot even be addressed.
      }
    }

    void close() {
      try {
        connector.close();
      } catch (RuntimeException deadAgent) {
        // A killed engine's transport is already gone.
      }
      memory.close();
    }
  }

  /** Runs a call of D's engine into its connector, marked as such (calls may nest). */
  private <T> T inConnector(Supplier<T> call) {
    boolean outer = insideDecoder;
    insideDecoder = true;
    try {
      return call.get();
    } finally {
      insideDecoder = outer;
    }
  }

  private record Held(List<Integer> blocks, long since) {}

  /** A request the decoder keeps asking the connector about until its lease is confirmed. */
  private record Asking(TransferParams params, TokenIds prompt) {}
}
