package io.kvbridge.tck.schedule;

import io.kvbridge.lease.LeaseToken;
import io.kvbridge.net.HandshakeAddress;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.tck.Prompts;
import io.kvbridge.time.ManualClock;
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
import java.util.function.Consumer;

/**
 * The ops that attack the pair: forged and replayed completions, transfer parameters and
 * handshakes, and P's memory corrupted under a lease. What it captured of earlier starts of either
 * engine, it replays; the forgers it starts answer handshakes until it closes. A request it routes
 * with parameters that do not belong to it must never be served.
 *
 * <p>Confined to the thread that runs the simulation.
 */
final class Adversary implements AutoCloseable {

  private final Shape shape;
  private final EnginePair engines;
  private final ManualClock clock;
  private final Random random;
  private final RequestLedger ledger;
  private final Consumer<String> proveNext;
  private final List<HandshakeChannel.Server> forgers = new ArrayList<>();
  private ProducerEngine.Captured earlierProducer; // the start of P before the current one
  private Handshake.Request earlierDecoder; // the last handshake request of D's previous start

  /**
   * @param clock simulated time, which a forger's answers give as P's
   * @param proveNext told what happened when the next request the router forwards must be served,
   *     as after a restart
   */
  Adversary(
      Shape shape,
      EnginePair engines,
      ManualClock clock,
      Random random,
      RequestLedger ledger,
      Consumer<String> proveNext) {
    this.shape = shape;
    this.engines = engines;
    this.clock = clock;
    this.random = random;
    this.ledger = ledger;
    this.proveNext = proveNext;
  }

  /** Captures how a start of P that is about to end answers handshakes. */
  void captureBeforeItEnds(ProducerEngine ending) {
    earlierProducer = ending.capture();
  }

  /** Captures the handshake request of a start of D that is about to end. */
  void captureBeforeItEnds(DecoderEngine ending) {
    earlierDecoder = ending.request();
  }

  /** See {@link Op.ForgeBlockList}. */
  void forgeBlockList(int variant) {
    String id = ledger.newRequest();
    ProducerEngine producer = engines.producer();
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
              engines
                  .decoder()
                  .acceptNeverToBeServed(
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
  void routeToAnotherPrompt(boolean digestRewritten) {
    String id = ledger.newRequest();
    engines
        .producer()
        .prefill(id, 1 + random.nextInt(3 * shape.producerBlockTokens()), false)
        .ifPresent(
            params -> {
              ledger.recordRouted();
              TokenIds other = Prompts.of(id + "/another", params.tokens() + 1);
              TransferParams routed =
                  digestRewritten
                      ? altered(params, "prompt_digest", other.digest(params.tokens()))
                      : params;
              engines.decoder().acceptNeverToBeServed(id, routed, other);
            });
  }

  /** See {@link Op.ForgeProducer}. */
  void forgeProducer(boolean stale, String op) {
    if (!pairHandshaken()) {
      return; // whoever answers first for an agent D does not know yet is trusted
    }
    String id = ledger.newRequest();
    boolean earlierStart = stale && earlierProducer != null;
    ProducerEngine.Captured answer = earlierStart ? earlierProducer : engines.producer().capture();
    String engineId = earlierStart ? ProducerEngine.ID : "impostor-" + ledger.requests();
    engines
        .producer()
        .prefill(id, 1 + random.nextInt(3 * shape.producerBlockTokens()), false)
        .ifPresent(
            params -> {
              ledger.recordRouted();
              engines
                  .decoder()
                  .acceptNeverToBeServed(
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
              proveNext.accept(op);
            });
  }

  /** See {@link Op.ReplayDecoderHandshake}. */
  void replayDecoderHandshake(String op) {
    Handshake.Request captured = earlierDecoder;
    if (captured == null
        || !captured.consumerEngineId().equals(engines.decoderId())
        || !pairHandshaken()) {
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
    proveNext.accept(op);
  }

  /**
   * Whether the current starts of P and D completed a handshake: D lists P's current incarnation
   * among its peers (D learns it from P's answer, which P gives after it loaded D's agent).
   */
  private boolean pairHandshaken() {
    long current = engines.producer().incarnation();
    return engines.decoder().status().producers().stream()
        .anyMatch(p -> p.engineId().equals(ProducerEngine.ID) && p.incarnation() == current);
  }

  /**
   * Answers every handshake at an address of its own as {@code engineId} with {@code answer}'s
   * incarnation and ranks; stops when the adversary closes. Reads no engine's clock.
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
  void corruptHeldBlock() {
    ProducerEngine producer = engines.producer();
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
  void forgeCompletion() {
    List<String> live = new ArrayList<>(engines.producer().heldBlocks().keySet());
    if (live.isEmpty()) {
      return;
    }
    String victim = live.get(random.nextInt(live.size()));
    engines.decoder().sendCompletion(new LeaseRef(victim, LeaseToken.random().value()));
  }

  /** See {@link Op.ReplayCompletion}. */
  void replayCompletion() {
    List<TransferParams> finished = engines.decoder().finishedParams();
    if (finished.isEmpty()) {
      return;
    }
    TransferParams params = finished.get(random.nextInt(finished.size()));
    engines.decoder().sendCompletion(new LeaseRef(params.requestId(), params.leaseToken()));
  }

  private static TransferParams altered(TransferParams params, Object... keysAndValues) {
    Map<String, Object> map = new HashMap<>(params.toMap());
    for (int i = 0; i < keysAndValues.length; i += 2) {
      map.put((String) keysAndValues[i], keysAndValues[i + 1]);
    }
    return TransferParams.fromMap(map);
  }

  @Override
  public void close() {
    forgers.forEach(HandshakeChannel.Server::close);
  }
}
