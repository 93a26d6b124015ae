package io.kvbridge.tck.schedule;

import static org.awaitility.Awaitility.await;

import io.kvbridge.integrity.ChecksumInput;
import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.lease.EndReason;
import io.kvbridge.lease.LeaseEnd;
import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.lease.LeaseToken;
import io.kvbridge.net.HandshakeAddress;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.runtime.ConnectorRegistry;
import io.kvbridge.spi.Availability;
import io.kvbridge.spi.ConnectorProperties;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.FinishDecision;
import io.kvbridge.spi.FinishedRequest;
import io.kvbridge.spi.FinishedTransfers;
import io.kvbridge.spi.InvalidTransferParamsException;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.LoadFailure;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.ProducerStatus;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.spi.TransportProvider;
import io.kvbridge.tck.KvContent;
import io.kvbridge.tck.Messages;
import io.kvbridge.tck.Prompts;
import io.kvbridge.tck.faults.Faults;
import io.kvbridge.time.ManualClock;
import io.kvbridge.time.MonotonicClock;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.Transport;
import io.kvbridge.wire.ConsumerHandshake;
import io.kvbridge.wire.Handshake;
import io.kvbridge.wire.HandshakeChannel;
import io.kvbridge.wire.LeaseRef;
import io.kvbridge.wire.ProducerHandshake;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.function.Supplier;

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

  static final Duration LEASE = Duration.ofSeconds(10);
  static final Duration MAX_LIFETIME = Duration.ofSeconds(30);
  static final Duration HEARTBEAT = Duration.ofSeconds(3);
  static final Duration SWEEP = Duration.ofMillis(500);
  static final Duration SAFETY_MARGIN = Duration.ofSeconds(1);
  static final Duration REPLY_TIMEOUT = Duration.ofSeconds(2);
  private static final String PRODUCER_ID = "prefill";
  private static final int IMMEDIATE_STEPS = 4;

  /** How many settles the request that proves a restart may take to end. */
  private static final int PROOF_SETTLES = 10;

  private final Shape shape;
  private final List<KvLayout> producerLayouts;
  private final List<KvLayout> decoderLayouts;
  private final ManualClock clock = new ManualClock();
  private final MonotonicClock producerClock = this::readProducerClock;
  private final MonotonicClock decoderClock;
  private final ConnectorRegistry registry;
  private final Duration patience;
  private final Faults faults;
  private final Random random;
  // The incarnation of the latest start of any engine: each start draws a greater one, as nodes
  // whose clocks move forward do.
  private long incarnations = ConnectorSettings.incarnation(1_796_000_000_000L, 0);
  private final Map<String, Prompt> written = new HashMap<>();
  private final Set<String> mustNotBeServed = new HashSet<>();
  private final Set<String> cancelledOnDecoder = new HashSet<>();
  private final Set<String> heldInFull = new HashSet<>();
  private final Set<String> servedRequests = new HashSet<>(); // by every D, dead ones included
  // How each lease ended on P, over every incarnation; filled by P's connectors as leases end.
  private final Map<String, EndReason> leaseEnds = new ConcurrentHashMap<>();
  private final List<String> leasesEndedTwice = new CopyOnWriteArrayList<>();
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
  private Captured earlierProducer; // the start of P before the current one, as it answered
  private Handshake.Request earlierDecoder; // the last handshake request of D's previous start
  private final List<HandshakeChannel.Server> forgers = new ArrayList<>();
  private int nextRequest;
  private int requests;
  private int routed;
  private int served;
  private int failed;
  private int aborted;
  private int partlyLocal;

  // Requests a decoder still held when it shut down gracefully: it releases their leases as it
  // closes, so P may end them RELEASED.
  private final Set<String> closedWithDecoder = new HashSet<>();
  private int restartsProven;

  /**
   * @param shape the engines' ranks, block sizes and memory order
   * @param transports creates an agent's raw transport from its name
   * @param patience how long the engines may take to settle after one op on an asynchronous
   *     transport
   */
  Simulation(
      Shape shape, int clockSkewMillis, Function<String, Transport> transports, Duration patience) {
    this.shape = shape;
    this.producerLayouts = shape.producerLayouts();
    this.decoderLayouts = shape.decoderLayouts();
    long skewNanos = Duration.ofMillis(clockSkewMillis).toNanos();
    this.decoderClock = () -> clock.nanoTime() + skewNanos;
    long seed = 31L * clockSkewMillis + 7;
    this.registry = ConnectorRegistry.of(List.of(new AgentsByName(transports)));
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

  /** Requests D decoded: loaded and checked, or held in full already. */
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

  /** Requests D held every token of, and so read nothing for. */
  int heldInFull() {
    return heldInFull.size();
  }

  /** Requests D held a prefix of, and loaded the rest of. */
  int partlyLocal() {
    return partlyLocal;
  }

  /** Restarts after which the pair served the next forwarded request within one handshake. */
  int restartsProven() {
    return restartsProven;
  }

  /** Why each load that failed or was refused on D did, in the order D learned it. */
  List<String> failureReasons() {
    return List.copyOf(failureReasons);
  }

  /** How each lease that ended on P did, by request, over every incarnation of P. */
  Map<String, EndReason> leaseEnds() {
    return Map.copyOf(leaseEnds);
  }

  /** The producer's part of its connector's status, of its current incarnation. */
  ProducerStatus producerStatus() {
    return producer.connector.status().producer().orElseThrow();
  }

  /** The bytes D's current incarnation read. */
  long decoderBytesRead() {
    return decoder.connector.status().consumer().orElseThrow().bytesRead();
  }

  /** How many blocks of D's pool are free now. */
  int decoderFreeBlocks() {
    return decoder.free.size();
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
    slowHandshake = null;
    advance(MAX_LIFETIME.plus(LEASE).plusSeconds(5).toMillis());
    if (restartToProve != null) {
      proveServedAfterRestart(1, 0);
    }
  }

  void checkEverythingEnded() {
    if (!producer.held.isEmpty()) {
      throw new AssertionError("P still holds blocks of " + producer.held.keySet());
    }
    if (producer.free.size() != Shape.PRODUCER_BLOCKS) {
      throw new AssertionError(
          "P leaked " + (Shape.PRODUCER_BLOCKS - producer.free.size()) + " blocks");
    }
    int liveLeases = producer.connector.status().producer().orElseThrow().liveLeases();
    if (liveLeases != 0) {
      throw new AssertionError("P has live leases: " + liveLeases);
    }
    if (!decoder.pending.isEmpty() || !decoder.asking.isEmpty()) {
      throw new AssertionError(
          "requests never ended on D: " + decoder.pending.keySet() + decoder.asking.keySet());
    }
    if (decoder.free.size() != shape.decoderBlocks()) {
      throw new AssertionError(
          "D leaked " + (shape.decoderBlocks() - decoder.free.size()) + " blocks");
    }
    checkLeaseEnds();
  }

  /**
   * Every lease ended once; P ended one RELEASED only if D gave it back (it cancelled the load,
   * held every token, or shut down gracefully while it waited for the load), and never READ one
   * whose every token D held (nothing was read for it). A request D served had its lease end as P
   * acknowledged it: READ, or RELEASED where D held every token; D serves what it read only once P
   * has said its lease held until the read was complete.
   */
  private void checkLeaseEnds() {
    if (!leasesEndedTwice.isEmpty()) {
      throw new AssertionError("leases ended twice on P: " + leasesEndedTwice);
    }
    for (String id : servedRequests) {
      EndReason expected = heldInFull.contains(id) ? EndReason.RELEASED : EndReason.READ;
      EndReason ended = leaseEnds.get(id);
      if (ended != expected) {
        throw new AssertionError(
            "D served "
                + id
                + ", but P "
                + (ended == null ? "has not ended its lease" : "ended its lease " + ended)
                + "; an acknowledged lease ends "
                + expected);
      }
    }
    for (Map.Entry<String, EndReason> end : leaseEnds.entrySet()) {
      String id = end.getKey();
      if (end.getValue() == EndReason.RELEASED
          && !cancelledOnDecoder.contains(id)
          && !closedWithDecoder.contains(id)
          && !heldInFull.contains(id)) {
        throw new AssertionError(
            "P ended the lease of "
                + id
                + " RELEASED, but D neither cancelled it, held it, nor closed with it");
      }
      if (end.getValue() == EndReason.READ && heldInFull.contains(id)) {
        throw new AssertionError(
            "P ended the lease of " + id + " READ, but D held every token and read nothing");
      }
    }
  }

  @Override
  public void close() {
    forgers.forEach(HandshakeChannel.Server::close);
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
    } else if (op instanceof Op.FailNextRead f) {
      Link link = link(f.decoderRank(), f.source());
      faults.failNextReadsBetween(
          link.decoderAgent(),
          link.producerAgent(),
          1,
          "injected read failure on D rank "
              + link.decoderRank()
              + " from P rank "
              + link.producerRank());
    } else if (op instanceof Op.StallNextRead s) {
      Link link = link(s.decoderRank(), s.source());
      faults.stallNextReadsBetween(link.decoderAgent(), link.producerAgent(), 1);
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
    } else if (op instanceof Op.ForgeProducer f) {
      forgeProducer(f.stale(), op.toString());
    } else if (op instanceof Op.ReplayDecoderHandshake) {
      replayDecoderHandshake(op.toString());
    } else {
      throw new IllegalArgumentException("unknown op " + op);
    }
  }

  /**
   * D's rank {@code decoderRank} reading from the {@code source}-th of the P ranks holding its
   * heads, each modulo what there is, under D's current engine id.
   */
  private Link link(int decoderRank, int source) {
    int d = decoderRank % shape.decoderTp();
    KvLayout mine = decoderLayouts.get(d);
    List<Integer> sources = new ArrayList<>();
    for (int q = 0; q < shape.producerTp(); q++) {
      KvLayout theirs = producerLayouts.get(q);
      if (theirs.headStart() < mine.headStart() + mine.headCount()
          && mine.headStart() < theirs.headStart() + theirs.headCount()) {
        sources.add(q);
      }
    }
    return new Link(decoderId(), d, sources.get(source % sources.size()));
  }

  private void forgeBlockList(int variant) {
    String id = "r" + nextRequest++;
    requests++;
    int tokens = 3 * shape.producerBlockTokens() - 1;
    producer
        .prefill(id, tokens, false)
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

  private void routeToAnotherPrompt(boolean digestRewritten) {
    String id = "r" + nextRequest++;
    requests++;
    producer
        .prefill(id, 1 + random.nextInt(3 * shape.producerBlockTokens()), false)
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

  /** See {@link Op.ForgeProducer}. */
  private void forgeProducer(boolean stale, String op) {
    if (!pairHandshaken()) {
      return; // whoever answers first for an agent D does not know yet is trusted
    }
    String id = "r" + nextRequest++;
    requests++;
    boolean earlierStart = stale && earlierProducer != null;
    Captured answer = earlierStart ? earlierProducer : producer.capture();
    String engineId = earlierStart ? PRODUCER_ID : "impostor-" + nextRequest;
    producer
        .prefill(id, 1 + random.nextInt(3 * shape.producerBlockTokens()), false)
        .ifPresent(
            params -> {
              routed++;
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
    HandshakeAddress address = HandshakeAddress.parse("local://" + PRODUCER_ID);
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
    long current = producer.connector.settings().incarnation();
    return decoder.connector.status().consumer().orElseThrow().producers().stream()
        .anyMatch(p -> p.engineId().equals(PRODUCER_ID) && p.incarnation() == current);
  }

  /** The next request the router forwards must be served, as after a restart. */
  private void proveNext(String what) {
    restartToProve = restartToProve == null ? what : restartToProve + " and " + what;
  }

  /**
   * Answers every handshake at an address of its own as {@code engineId} with {@code answer}'s
   * incarnation and ranks; stops when the simulation closes. Reads no engine's clock.
   */
  private String forger(String engineId, Captured answer) {
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

  /** What a forger holds of a start of P: its incarnation and its ranks as its answer gave them. */
  private record Captured(long incarnation, List<Handshake.Rank> ranks) {}

  private void corruptHeldBlock() {
    List<Held> held = new ArrayList<>(producer.held.values());
    if (held.isEmpty()) {
      return;
    }
    List<Integer> blocks = held.get(random.nextInt(held.size())).blocks;
    int rank = random.nextInt(shape.producerTp());
    byte[] junk = new byte[producerLayouts.get(rank).blockBytes()];
    random.nextBytes(junk);
    writeBlock(
        producer.memories.get(rank),
        producerLayouts.get(rank),
        blocks.get(random.nextInt(blocks.size())),
        junk);
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
        && r.localTokens() < r.tokens()
        && producer.free.size() >= producer.blocksFor(r.tokens())) {
      proveServedAfterRestart(r.tokens(), r.localTokens());
      return;
    }
    String id = "r" + nextRequest++;
    requests++;
    producer
        .prefill(id, r.tokens(), r.abortedOnP())
        .ifPresent(
            params -> {
              if (!r.routerDrops()) {
                routed++;
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
    String id = "r" + nextRequest++;
    requests++;
    int handshakesBefore = handshakesAnswered;
    faults.suspendRules();
    try {
      TransferParams params =
          producer
              .prefill(id, tokens, false)
              .orElseThrow(() -> new IllegalStateException("P has no room for " + id));
      routed++;
      decoder.accept(id, params, localTokens);
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
    earlierProducer = old.capture();
    mustNotBeServed.addAll(old.held.keySet());
    if (!graceful) {
      old.agents.forEach(agent -> faults.kill(agent.agentName()));
    }
    old.close(); // its held blocks vanish with its memory: neither leaked nor freed
    producer = new ProducerEngine();
  }

  /** D's process ends, gracefully or killed: its requests end with it, its memory is lost. */
  private void endDecoder(boolean graceful) {
    DecoderEngine old = decoder;
    earlierDecoder = old.request();
    failed += old.pending.size() + old.asking.size();
    if (graceful) {
      closedWithDecoder.addAll(old.pending.keySet());
      closedWithDecoder.addAll(old.asking.keySet());
      old.close();
    } else {
      old.agents.forEach(agent -> faults.kill(agent.agentName()));
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
      checkLeaseEnds();
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

  /**
   * Whether nothing moves; what waits for a silent P to drain it does not count (D's messages go to
   * P's lead rank, the only one that drains any).
   */
  private boolean quiet() {
    return producerSilent ? faults.quietExceptTowards(PRODUCER_ID) : faults.quiet();
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

  /**
   * An engine's settings; every start draws a new incarnation, greater than the last, from the
   * seeded source.
   */
  private ConnectorSettings settings(
      String engineId,
      Role role,
      int tpDegree,
      MonotonicClock engineClock,
      ConnectorObserver observer) {
    return ConnectorSettings.builder(AgentsByName.TYPE, engineId)
        .role(role)
        .tpDegree(tpDegree)
        .leaseTerms(new LeaseTerms(LEASE, MAX_LIFETIME))
        .heartbeatInterval(HEARTBEAT)
        .safetyMargin(SAFETY_MARGIN)
        .replyTimeout(REPLY_TIMEOUT)
        .incarnation(incarnations += 1 + (random.nextLong() & 0xFFFF))
        .clock(engineClock)
        .observer(observer)
        .build();
  }

  /**
   * Builds an engine's connector, one agent per rank from {@link #registry}, each wrapped into the
   * fault group and added to {@code agents}, by rank.
   */
  private KvConnector connector(ConnectorSettings settings, List<Transport> agents) {
    return registry.create(
        settings,
        raw -> {
          Transport member = faults.decorate(raw);
          agents.add(member);
          return member;
        });
  }

  /** Allocates and registers every rank's KV cache of {@code connector}; its memories, by rank. */
  private static List<KvMemory> registerKvCaches(KvConnector connector, List<KvLayout> layouts) {
    List<KvMemory> memories = new ArrayList<>(layouts.size());
    for (int r = 0; r < layouts.size(); r++) {
      KvMemory memory = connector.worker(r).allocateKvCache(layouts.get(r));
      memories.add(memory);
      connector.worker(r).registerKvCache(memory, layouts.get(r));
    }
    return List.copyOf(memories);
  }

  private static byte[] readBlock(KvMemory memory, KvLayout layout, int block) {
    byte[] bytes = new byte[layout.blockBytes()];
    memory.read((long) block * layout.blockBytes(), ByteBuffer.wrap(bytes));
    return bytes;
  }

  private static void writeBlock(KvMemory memory, KvLayout layout, int block, byte[] bytes) {
    memory.write((long) block * layout.blockBytes(), ByteBuffer.wrap(bytes));
  }

  /** The tokens of block {@code index} of a prompt of {@code tokens} in blocks of {@code size}. */
  private static int usedTokens(int index, int size, int tokens) {
    return Math.max(0, Math.min(size, tokens - index * size));
  }

  /**
   * The prefill engine, always engine id {@code prefill}: a block pool shared by its ranks, each
   * rank's KV memory, and when each held request was granted. Every lease end its connector reports
   * is recorded, once per request.
   */
  private final class ProducerEngine {
    final List<Transport> agents = new ArrayList<>();
    final KvConnector connector =
        connector(
            settings(
                PRODUCER_ID,
                Role.PRODUCER,
                shape.producerTp(),
                producerClock,
                new ConnectorObserver() {
                  @Override
                  public void ended(LeaseEnd end) {
                    String id = end.lease().requestId();
                    EndReason before = leaseEnds.putIfAbsent(id, end.reason());
                    if (before != null) {
                      leasesEndedTwice.add(id + " (" + before + ", then " + end.reason() + ")");
                    }
                  }
                }),
            agents);
    final List<KvMemory> memories = registerKvCaches(connector, producerLayouts);
    final Deque<Integer> free = new ArrayDeque<>();
    final Map<String, Held> held = new LinkedHashMap<>();

    ProducerEngine() {
      for (int b = 0; b < Shape.PRODUCER_BLOCKS; b++) {
        free.add(b);
      }
    }

    /** This start as its handshake answer gives it: its incarnation, its ranks. */
    Captured capture() {
      List<Handshake.Rank> ranks = new ArrayList<>(agents.size());
      for (int r = 0; r < agents.size(); r++) {
        KvMemory memory = memories.get(r);
        ranks.add(
            new Handshake.Rank(
                producerLayouts.get(r),
                memory.address(),
                memory.deviceId(),
                memory.kind(),
                agents.get(r).localMetadata()));
      }
      return new Captured(connector.settings().incarnation(), ranks);
    }

    int blocksFor(int tokens) {
      return (tokens + shape.producerBlockTokens() - 1) / shape.producerBlockTokens();
    }

    /**
     * Computes a prompt of {@code tokens} into fresh blocks of every rank (the rest of a partly
     * filled last block is whatever its last user left) and finishes it for D.
     */
    Optional<TransferParams> prefill(String id, int tokens, boolean aborted) {
      int count = blocksFor(tokens);
      if (free.size() < count) {
        failed++; // P refuses the request: it ends at once with an error.
        return Optional.empty();
      }
      List<Integer> ids = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        ids.add(free.poll());
      }
      long seed = random.nextLong();
      for (int r = 0; r < shape.producerTp(); r++) {
        KvLayout layout = producerLayouts.get(r);
        for (int i = 0; i < count; i++) {
          byte[] block = new byte[layout.blockBytes()];
          random.nextBytes(block);
          int first = i * layout.tokensPerBlock();
          KvContent.write(
              layout, block, seed, first, usedTokens(i, layout.tokensPerBlock(), tokens));
          writeBlock(memories.get(r), layout, ids.get(i), block);
        }
      }
      written.put(id, new Prompt(seed, tokens));
      FinishDecision decision =
          connector
              .scheduler()
              .requestFinished(
                  new FinishedRequest(id, ids, Prompts.of(id, tokens), tokens, false, true));
      if (!decision.delayFree()) {
        throw new AssertionError(
            "a finished request with computed tokens must be held for D: " + id);
      }
      TransferParams params = decision.params().orElseThrow();
      if (params.tokens() != tokens || !params.blockIds().equals(ids)) {
        throw new AssertionError(
            "P must lease every computed token of "
                + id
                + ", the partly filled last block included: "
                + tokens
                + " tokens in blocks "
                + ids
                + ", not "
                + params.tokens()
                + " in "
                + params.blockIds());
      }
      held.put(id, new Held(ids, clock.nanoTime()));
      if (aborted) {
        connector.scheduler().revoke(id, "client aborted");
      }
      return Optional.of(params);
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
          for (int r = 0; r < shape.producerTp(); r++) {
            byte[] junk = new byte[producerLayouts.get(r).blockBytes()];
            random.nextBytes(junk);
            // as the next request reusing the block would
            writeBlock(memories.get(r), producerLayouts.get(r), block, junk);
          }
        }
      }
    }

    /**
     * The checksums P's memory gives {@code blocks}, as blocks of a prompt of {@code tokens}, now:
     * per rank, each over the block's used bytes in memory order, in transfer-parameter form.
     */
    List<String> checksumsHex(List<Integer> blocks, int tokens, ChecksumScheme scheme) {
      List<String> perRank = new ArrayList<>();
      for (int r = 0; r < shape.producerTp(); r++) {
        KvLayout layout = producerLayouts.get(r);
        StringBuilder hex = new StringBuilder();
        for (int i = 0; i < blocks.size(); i++) {
          long base = (long) blocks.get(i) * layout.blockBytes();
          int used = usedTokens(i, layout.tokensPerBlock(), tokens);
          List<ChecksumInput.Range> ranges = new ArrayList<>();
          for (long[] range : usedRanges(layout, used)) {
            ranges.add(new ChecksumInput.Range(memories.get(r), base + range[0], range[1]));
          }
          hex.append(HexFormat.of().toHexDigits(scheme.checksum(ChecksumInput.of(ranges))));
        }
        perRank.add(hex.toString());
      }
      return perRank;
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
     * unbinds its handshake address, as the end of its process would: its agents are dead, so
     * nothing it does reaches anyone.
     */
    void close() {
      try {
        connector.close();
      } catch (RuntimeException deadAgent) {
        // A killed engine's agents are already gone.
      }
      memories.forEach(KvMemory::close);
    }
  }

  /**
   * The used bytes of a block of {@code layout} holding {@code usedTokens} tokens, as (offset,
   * length) ranges in memory order: what a producer's checksum of the block covers.
   */
  private static List<long[]> usedRanges(KvLayout layout, int usedTokens) {
    if (usedTokens == layout.tokensPerBlock()) {
      return List.of(new long[] {0, layout.blockBytes()});
    }
    List<long[]> ranges = new ArrayList<>();
    for (int layer = 0; layer < layout.layers(); layer++) {
      for (int plane = 0; plane < layout.planes(); plane++) {
        if (layout.order() == KvLayout.MemoryOrder.HEAD_MAJOR) {
          for (int h = layout.headStart(); h < layout.headStart() + layout.headCount(); h++) {
            ranges.add(
                new long[] {
                  layout.offsetInBlock(layer, plane, h, 0), (long) usedTokens * layout.vectorBytes()
                });
          }
        } else {
          ranges.add(
              new long[] {
                layout.offsetInBlock(layer, plane, layout.headStart(), 0),
                (long) usedTokens * layout.headCount() * layout.vectorBytes()
              });
        }
      }
    }
    return ranges;
  }

  /**
   * The decode engine: a block pool shared by its ranks, each rank's KV memory, and the loads it
   * waits for. Its calls into its connector are marked, so that P's clock read meanwhile counts as
   * a handshake answered.
   */
  private final class DecoderEngine {
    final List<Transport> agents = new ArrayList<>();
    final KvConnector connector;
    final List<KvMemory> memories;
    final Deque<Integer> free = new ArrayDeque<>();
    final Map<String, Loading> pending = new LinkedHashMap<>();
    final Map<String, Asking> asking = new LinkedHashMap<>();
    final List<TransferParams> finishedParams = new ArrayList<>();
    final Set<String> servedIds = new HashSet<>();
    final Set<String> cancelled = new HashSet<>();

    DecoderEngine(String engineId) {
      connector =
          connector(
              settings(
                  engineId, Role.CONSUMER, shape.decoderTp(), decoderClock, ConnectorObserver.NONE),
              agents);
      memories = registerKvCaches(connector, decoderLayouts);
      for (int b = 0; b < shape.decoderBlocks(); b++) {
        free.add(b);
      }
    }

    void accept(String id, TransferParams params, int localTokens) {
      accept(id, params, Prompts.of(id, params.tokens()), localTokens);
    }

    /** The handshake request this start of D sends, as someone who captured it holds it. */
    Handshake.Request request() {
      return new Handshake.Request(
          connector.settings().engineId(),
          connector.settings().incarnation(),
          decoderLayouts,
          agents.get(0).localMetadata());
    }

    /** Accepts parameters that do not belong to this request's prompt or blocks: never served. */
    void acceptNeverToBeServed(String id, TransferParams params, TokenIds prompt) {
      mustNotBeServed.add(id);
      accept(id, params, prompt, 0);
    }

    private void accept(String id, TransferParams params, TokenIds prompt, int localTokens) {
      asking.put(id, new Asking(params, prompt, localTokens));
      ask(id);
    }

    /** Asks the connector about a request, as an engine's scheduler does every step until ready. */
    private void ask(String id) {
      Asking a = asking.get(id);
      LoadMatch match;
      try {
        match =
            inConnector(
                () ->
                    connector.scheduler().matchRemote(id, a.prompt(), a.localTokens(), a.params()));
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
      } else if (match instanceof LoadMatch.Ready ready) {
        asking.remove(id);
        int tokens = a.params().tokens();
        int first = shape.firstTokenRead(tokens, a.localTokens());
        if (ready.firstToken() != first || ready.externalTokens() != tokens - first) {
          throw new AssertionError(
              "D holding "
                  + a.localTokens()
                  + " of the "
                  + tokens
                  + " tokens of "
                  + id
                  + " was told to load "
                  + ready
                  + "; it must load tokens from "
                  + first
                  + " (whole blocks of both engines) to the end");
        }
        if (ready.externalTokens() == 0) {
          // Every token's KV is here already: D decodes from it and reads nothing.
          heldInFull.add(id);
          finishedParams.add(a.params());
          served++;
          return;
        }
        if (first > 0) {
          partlyLocal++;
        }
        int needed = (tokens + shape.decoderBlockTokens() - 1) / shape.decoderBlockTokens();
        List<Integer> blocks = new ArrayList<>();
        while (blocks.size() < needed && !free.isEmpty()) {
          blocks.add(free.poll());
        }
        holdPrefix(id, blocks, first);
        pending.put(id, new Loading(blocks, a.params()));
        inConnector(
            () -> {
              connector.scheduler().afterAllocate(id, blocks);
              return null;
            });
      }
    }

    /**
     * Puts into the request's blocks what D holds before the load: in the blocks before token
     * {@code first} (whole blocks: shared prefix blocks in a real engine) the prompt's own KV,
     * which D computed; in the others, on which the load writes, whatever their last user left.
     */
    private void holdPrefix(String id, List<Integer> blocks, int first) {
      long seed = written.get(id).seed();
      for (int r = 0; r < shape.decoderTp(); r++) {
        KvLayout layout = decoderLayouts.get(r);
        for (int i = 0; i < blocks.size(); i++) {
          byte[] block = new byte[layout.blockBytes()];
          int from = i * layout.tokensPerBlock();
          if (from < first) {
            KvContent.write(layout, block, seed, from, layout.tokensPerBlock());
          } else {
            random.nextBytes(block);
          }
          writeBlock(memories.get(r), layout, blocks.get(i), block);
        }
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
      cancelledOnDecoder.add(id);
      aborted++;
      asking.remove(id);
      Loading loading = pending.remove(id);
      if (loading != null) {
        free.addAll(loading.blocks());
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
        checkHoldsThePrompt(id, blocks);
        servedIds.add(id);
        servedRequests.add(id);
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

    /**
     * What D decodes {@code id} from: on every rank, every byte of every head it holds of every
     * token of the prompt must be the KV P computed for it.
     */
    private void checkHoldsThePrompt(String id, List<Integer> blocks) {
      Prompt prompt = written.get(id);
      for (int r = 0; r < shape.decoderTp(); r++) {
        KvLayout layout = decoderLayouts.get(r);
        for (int i = 0; i < blocks.size(); i++) {
          int used = usedTokens(i, layout.tokensPerBlock(), prompt.tokens());
          if (used == 0) {
            break;
          }
          Optional<String> wrong =
              KvContent.firstDifference(
                  layout,
                  readBlock(memories.get(r), layout, blocks.get(i)),
                  prompt.seed(),
                  i * layout.tokensPerBlock(),
                  used);
          if (wrong.isPresent()) {
            throw new AssertionError(
                "request "
                    + id
                    + " was reported received with KV that differs from what P computed, on D"
                    + " rank "
                    + r
                    + ": "
                    + wrong.get());
          }
        }
      }
    }

    private List<Integer> end(String id) {
      Loading loading = pending.remove(id);
      if (loading == null) {
        throw new AssertionError("D was told twice that " + id + " ended");
      }
      free.addAll(loading.blocks());
      finishedParams.add(loading.params());
      Set<Integer> distinct = new HashSet<>(free);
      if (distinct.size() != free.size()) {
        throw new AssertionError("D freed a block twice ending " + id);
      }
      return loading.blocks();
    }

    void sendCompletion(LeaseRef lease) {
      try {
        agents
            .get(0)
            .notify(PRODUCER_ID, Messages.completion(lease, connector.settings().engineId()));
      } catch (RuntimeException unreachable) {
        // D never handshook with P yet: the forged message cannot even be addressed.
      }
    }

    void close() {
      try {
        connector.close();
      } catch (RuntimeException deadAgent) {
        // A killed engine's agents are already gone.
      }
      memories.forEach(KvMemory::close);
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

  /**
   * The agents of the connector module under test, by name, as a connector type of their own: the
   * registry builds each engine's connector around one per rank, named as every type names them.
   */
  private record AgentsByName(Function<String, Transport> byName) implements TransportProvider {
    static final String TYPE = "schedule";

    @Override
    public String type() {
      return TYPE;
    }

    @Override
    public Availability availability(ConnectorProperties properties) {
      return Availability.available();
    }

    @Override
    public Transport create(ConnectorSettings settings, int rank) {
      return byName.apply(TransportProvider.agentName(settings.engineId(), rank));
    }
  }

  /** A rank of D, named by its engine id, reading from a rank of P. */
  private record Link(String decoderId, int decoderRank, int producerRank) {
    String decoderAgent() {
      return TransportProvider.agentName(decoderId, decoderRank);
    }

    String producerAgent() {
      return TransportProvider.agentName(PRODUCER_ID, producerRank);
    }
  }

  /** What P computed for a prompt: the seed of its KV and how many tokens it holds. */
  private record Prompt(long seed, int tokens) {}

  private record Held(List<Integer> blocks, long since) {}

  /** A request D lent blocks to for its load. */
  private record Loading(List<Integer> blocks, TransferParams params) {}

  /** A request the decoder keeps asking the connector about until its lease is confirmed. */
  private record Asking(TransferParams params, TokenIds prompt, int localTokens) {}
}
