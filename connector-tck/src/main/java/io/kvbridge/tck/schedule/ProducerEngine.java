package io.kvbridge.tck.schedule;

import io.kvbridge.integrity.ChecksumInput;
import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.lease.LeaseEnd;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.spi.FinishDecision;
import io.kvbridge.spi.FinishedRequest;
import io.kvbridge.spi.FinishedTransfers;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.ProducerStatus;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.StartedRequest;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.tck.KvContent;
import io.kvbridge.tck.Prompts;
import io.kvbridge.time.ManualClock;
import io.kvbridge.time.MonotonicClock;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.KvRegions;
import io.kvbridge.transfer.Transport;
import io.kvbridge.wire.Handshake;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;

/**
 * A start of the prefill engine, always engine id {@value #ID}: a block pool shared by its ranks,
 * each rank's KV memory, and when each held request was granted. P frees a request's blocks when
 * {@code doneSending} names it and immediately overwrites them on every rank, as reuse would. Every
 * lease end its connector reports is recorded in the ledger, once per request.
 */
final class ProducerEngine {

  static final String ID = "prefill";

  private final Shape shape;
  private final List<KvLayout> layouts;
  private final ManualClock clock;
  private final Random random;
  private final RequestLedger ledger;
  private final List<Transport> agents = new ArrayList<>();
  private final KvConnector connector;
  private final List<KvRegions> memories;
  private final Deque<Integer> free = new ArrayDeque<>();
  private final Map<String, Held> held = new LinkedHashMap<>();
  private final Map<String, Computing> computing = new LinkedHashMap<>();

  /**
   * Starts P.
   *
   * @param producerClock the clock P's connector reads
   * @param clock simulated time, read when P grants a lease and checks how long it held one
   */
  ProducerEngine(
      Shape shape,
      EngineStarter starter,
      MonotonicClock producerClock,
      ManualClock clock,
      Random random,
      RequestLedger ledger) {
    this.shape = shape;
    this.layouts = shape.producerLayouts();
    this.clock = clock;
    this.random = random;
    this.ledger = ledger;
    this.connector =
        starter.start(
            ID,
            Role.PRODUCER,
            shape.producerTp(),
            producerClock,
            new ConnectorObserver() {
              @Override
              public void ended(LeaseEnd end) {
                ledger.recordLeaseEnd(end);
              }
            },
            agents);
    this.memories = EngineStarter.registerKvCaches(connector, layouts);
    for (int b = 0; b < Shape.PRODUCER_BLOCKS; b++) {
      free.add(b);
    }
  }

  /** What a forger holds of a start of P: its incarnation and its ranks as its answer gave them. */
  record Captured(long incarnation, List<Handshake.Rank> ranks) {}

  /** This start as its handshake answer gives it: its incarnation, its ranks. */
  Captured capture() {
    List<Handshake.Rank> ranks = new ArrayList<>(agents.size());
    for (int r = 0; r < agents.size(); r++) {
      KvRegions memory = memories.get(r);
      ranks.add(
          new Handshake.Rank(
              layouts.get(r),
              memory.regions().stream().map(KvMemory::address).toList(),
              memory.deviceId(),
              memory.kind(),
              agents.get(r).localMetadata()));
    }
    return new Captured(connector.settings().incarnation(), ranks);
  }

  long incarnation() {
    return connector.settings().incarnation();
  }

  /** The producer's part of its connector's status. */
  ProducerStatus status() {
    return connector.status().producer().orElseThrow();
  }

  /** The names of its agents, by rank. */
  List<String> agentNames() {
    return agents.stream().map(Transport::agentName).toList();
  }

  /** The blocks of every request P holds, in the order P granted them. */
  Map<String, List<Integer>> heldBlocks() {
    Map<String, List<Integer>> blocks = new LinkedHashMap<>();
    held.forEach((id, h) -> blocks.put(id, h.blocks()));
    return blocks;
  }

  /** The free blocks of the pool, in the order P takes them. */
  List<Integer> freeBlocks() {
    return List.copyOf(free);
  }

  /** Whether the pool has the blocks a prompt of {@code tokens} takes. */
  boolean hasRoomFor(int tokens) {
    return free.size() >= blocksFor(tokens);
  }

  private int blocksFor(int tokens) {
    return (tokens + shape.producerBlockTokens() - 1) / shape.producerBlockTokens();
  }

  /**
   * The blocks a prompt of {@code tokens} takes, out of the pool; empty if P has no room for it,
   * and refuses request {@code id}.
   */
  private Optional<List<Integer>> takeBlocks(String id, int tokens) {
    int count = blocksFor(tokens);
    if (free.size() < count) {
      ledger.recordRefusedOnProducer(id);
      return Optional.empty();
    }
    List<Integer> ids = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      ids.add(free.poll());
    }
    return Optional.of(ids);
  }

  /**
   * Computes a prompt of {@code tokens} into fresh blocks of every rank (the rest of a partly
   * filled last block is whatever its last user left) and finishes it for D; empty if P has no room
   * for it, and refuses it.
   */
  Optional<TransferParams> prefill(String id, int tokens, boolean aborted) {
    Optional<List<Integer>> taken = takeBlocks(id, tokens);
    if (taken.isEmpty()) {
      return Optional.empty();
    }
    List<Integer> ids = taken.get();
    int count = ids.size();
    long seed = random.nextLong();
    for (int r = 0; r < shape.producerTp(); r++) {
      KvLayout layout = layouts.get(r);
      for (int i = 0; i < count; i++) {
        byte[] block = new byte[layout.blockBytes()];
        random.nextBytes(block);
        int first = i * layout.tokensPerBlock();
        KvContent.write(
            layout, block, seed, first, KvBlocks.usedTokens(i, layout.tokensPerBlock(), tokens));
        memories.get(r).writeBlock(ids.get(i), block);
      }
    }
    ledger.recordComputed(id, new RequestLedger.Prompt(seed, tokens));
    FinishDecision decision =
        connector
            .scheduler()
            .requestFinished(
                new FinishedRequest(id, ids, Prompts.of(id, tokens), tokens, false, true));
    if (!decision.delayFree()) {
      throw new AssertionError("a finished request with computed tokens must be held for D: " + id);
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

  /**
   * Starts the prefill of a prompt of {@code tokens} tokens as a streamed lease: fresh blocks of
   * every rank holding whatever their last user left, the lease granted now; its layers are
   * computed later ({@link #computeLayer}). Empty if P has no room for it, and refuses it.
   */
  Optional<TransferParams> startStreamed(String id, int tokens) {
    Optional<List<Integer>> taken = takeBlocks(id, tokens);
    if (taken.isEmpty()) {
      return Optional.empty();
    }
    List<Integer> ids = taken.get();
    long seed = random.nextLong();
    ledger.recordComputed(id, new RequestLedger.Prompt(seed, tokens));
    TransferParams params =
        connector
            .scheduler()
            .requestStarted(new StartedRequest(id, ids, Prompts.of(id, tokens), tokens))
            .orElseThrow(() -> new AssertionError("P did not stream " + id));
    if (!params.streamed() || params.tokens() != tokens || !params.blockIds().equals(ids)) {
      throw new AssertionError("P must stream every token of " + id + ": " + params);
    }
    held.put(id, new Held(ids, clock.nanoTime()));
    computing.put(id, new Computing(ids, tokens, seed));
    return Optional.of(params);
  }

  /** The requests P still computes, in the order it started them. */
  List<String> computing() {
    return List.copyOf(computing.keySet());
  }

  /**
   * The forward pass writes the next layer of {@code id} on every rank, each rank reporting it
   * saved; after the last layer the request is finished. Whether it was computing.
   */
  boolean computeLayer(String id) {
    Computing c = computing.get(id);
    if (c == null) {
      return false;
    }
    for (int r = 0; r < shape.producerTp(); r++) {
      KvLayout layout = layouts.get(r);
      for (int i = 0; i < c.blocks().size(); i++) {
        byte[] block = memories.get(r).readBlock(c.blocks().get(i));
        KvContent.writeLayers(
            layout,
            block,
            c.seed(),
            i * layout.tokensPerBlock(),
            KvBlocks.usedTokens(i, layout.tokensPerBlock(), c.tokens()),
            c.layers,
            c.layers + 1);
        memories.get(r).writeBlock(c.blocks().get(i), block);
      }
      connector.worker(r).layerSaved(id, c.layers);
    }
    c.layers++;
    if (c.layers == layouts.get(0).layers()) {
      finish(id, false);
    }
    return true;
  }

  /** Every request P computes gets its next layer: the forward pass moves on. */
  void computeNextLayers() {
    for (String id : computing()) {
      computeLayer(id);
    }
  }

  /** The client goes away on P while it computes {@code id}: the request is aborted. */
  void abort(String id) {
    if (computing.containsKey(id)) {
      finish(id, true);
    }
  }

  /**
   * The engine finishes (or aborts) a request it streamed: the connector says whether to hold its
   * blocks until {@code doneSending} or free them now (its lease ended while it computed).
   */
  private void finish(String id, boolean aborted) {
    Computing c = computing.remove(id);
    FinishDecision decision =
        connector
            .scheduler()
            .requestFinished(
                new FinishedRequest(
                    id, c.blocks(), Prompts.of(id, c.tokens()), c.tokens(), aborted, true));
    if (!decision.delayFree()) {
      free(id);
    }
  }

  /**
   * One step of the engine: frees, and overwrites, the blocks of what {@code doneSending} names.
   */
  void step() {
    FinishedTransfers finished = connector.worker().getFinished(Set.of());
    for (String id : finished.doneSending()) {
      if (computing.containsKey(id)) {
        throw new AssertionError(
            "doneSending named " + id + " while P still computes into its blocks");
      }
      free(id);
    }
  }

  /** Frees, and overwrites, the blocks of {@code id}, as the next request reusing them would. */
  private void free(String id) {
    Held h = held.remove(id);
    if (h == null) {
      throw new AssertionError(
          "doneSending named " + id + ", which holds no blocks: a double free");
    }
    for (int block : h.blocks()) {
      if (free.contains(block)) {
        throw new AssertionError("block " + block + " of " + id + " freed twice");
      }
      free.add(block);
      for (int r = 0; r < shape.producerTp(); r++) {
        byte[] junk = new byte[layouts.get(r).blockBytes()];
        random.nextBytes(junk);
        // as the next request reusing the block would
        memories.get(r).writeBlock(block, junk);
      }
    }
  }

  /** A request P computes layer by layer: its blocks, tokens, KV seed and layers computed. */
  private static final class Computing {
    private final List<Integer> blocks;
    private final int tokens;
    private final long seed;
    private int layers;

    Computing(List<Integer> blocks, int tokens, long seed) {
      this.blocks = blocks;
      this.tokens = tokens;
      this.seed = seed;
    }

    List<Integer> blocks() {
      return blocks;
    }

    int tokens() {
      return tokens;
    }

    long seed() {
      return seed;
    }
  }

  /** The starter's sweep, which also sends the heartbeats that are due. */
  void sweep() {
    connector.worker().sweep();
  }

  /** Writes {@code bytes} over block {@code block} of rank {@code rank}'s memory. */
  void overwriteBlock(int rank, int block, byte[] bytes) {
    memories.get(rank).writeBlock(block, bytes);
  }

  /**
   * The checksums P's memory gives {@code blocks}, as blocks of a prompt of {@code tokens}, now:
   * per rank, each over the block's used bytes in memory order, in transfer-parameter form.
   */
  List<String> checksumsHex(List<Integer> blocks, int tokens, ChecksumScheme scheme) {
    List<String> perRank = new ArrayList<>();
    for (int r = 0; r < shape.producerTp(); r++) {
      KvLayout layout = layouts.get(r);
      StringBuilder hex = new StringBuilder();
      for (int i = 0; i < blocks.size(); i++) {
        int used = KvBlocks.usedTokens(i, layout.tokensPerBlock(), tokens);
        List<ChecksumInput.Range> ranges = new ArrayList<>();
        KvRegions memory = memories.get(r);
        layout.forEachUsedRange(
            blocks.get(i),
            used,
            (at, length) -> ranges.add(ChecksumInput.Range.at(memory, at, length)));
        hex.append(HexFormat.of().toHexDigits(scheme.checksum(ChecksumInput.of(ranges))));
      }
      perRank.add(hex.toString());
    }
    return perRank;
  }

  void checkNothingHeldTooLong() {
    long limit = EngineStarter.MAX_LIFETIME.plus(EnginePair.SWEEP).toNanos();
    for (Map.Entry<String, Held> e : held.entrySet()) {
      // A request P still computes holds its blocks as long as its forward pass runs.
      if (!computing.containsKey(e.getKey()) && clock.nanoTime() - e.getValue().since() > limit) {
        throw new AssertionError("P holds " + e.getKey() + " past max lifetime plus one sweep");
      }
    }
  }

  /** P holds no request, has every block back in its pool, and no live lease. */
  void checkEverythingEnded() {
    if (!computing.isEmpty()) {
      throw new AssertionError("P still computes " + computing.keySet());
    }
    if (!held.isEmpty()) {
      throw new AssertionError("P still holds blocks of " + held.keySet());
    }
    if (free.size() != Shape.PRODUCER_BLOCKS) {
      throw new AssertionError("P leaked " + (Shape.PRODUCER_BLOCKS - free.size()) + " blocks");
    }
    int liveLeases = status().liveLeases();
    if (liveLeases != 0) {
      throw new AssertionError("P has live leases: " + liveLeases);
    }
  }

  /**
   * Closes the connector: gracefully, its leases are revoked. A killed engine's connector only
   * unbinds its handshake address, as the end of its process would: its agents are dead, so nothing
   * it does reaches anyone.
   */
  void close() {
    try {
      connector.close();
    } catch (RuntimeException deadAgent) {
      // A killed engine's agents are already gone.
    }
    memories.forEach(m -> m.regions().forEach(KvMemory::close));
  }

  private record Held(List<Integer> blocks, long since) {}
}
