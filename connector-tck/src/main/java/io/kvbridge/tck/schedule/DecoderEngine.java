package io.kvbridge.tck.schedule;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.spi.ConsumerStatus;
import io.kvbridge.spi.FinishedTransfers;
import io.kvbridge.spi.InvalidTransferParamsException;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.LoadFailure;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.tck.KvContent;
import io.kvbridge.tck.Messages;
import io.kvbridge.tck.Prompts;
import io.kvbridge.time.MonotonicClock;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.KvRegions;
import io.kvbridge.transfer.Transport;
import io.kvbridge.wire.Handshake;
import io.kvbridge.wire.LeaseRef;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;

/**
 * A start of the decode engine: a block pool shared by its ranks, each rank's KV memory, and the
 * loads it waits for. D decodes only what {@code doneReceiving} names, after checking, on every
 * rank, every byte of every head and token of the prompt against the KV P computed for it ({@link
 * KvContent}), through each side's layouts. D may hold a prefix of a prompt already: it holds that
 * KV in the blocks before the first token the load writes, and asks for nothing when it holds every
 * token. Its calls into its connector are marked on P's clock, so that P's clock read meanwhile
 * counts as a handshake answered.
 */
final class DecoderEngine {

  private final Shape shape;
  private final List<KvLayout> layouts;
  private final ProducerClock producerClock;
  private final Random random;
  private final RequestLedger ledger;
  private final List<Transport> agents = new ArrayList<>();
  private final KvConnector connector;
  private final List<KvRegions> memories;
  private final Deque<Integer> free = new ArrayDeque<>();
  private final Map<String, Loading> pending = new LinkedHashMap<>();
  private final Map<String, Asking> asking = new LinkedHashMap<>();
  private final List<TransferParams> finishedParams = new ArrayList<>();
  private final Set<String> servedIds = new HashSet<>();
  private final Set<String> cancelled = new HashSet<>();

  /**
   * Starts D as {@code engineId}.
   *
   * @param decoderClock the clock D's connector reads
   * @param producerClock P's clock, on which D's calls into its connector are marked
   */
  DecoderEngine(
      String engineId,
      Shape shape,
      EngineStarter starter,
      MonotonicClock decoderClock,
      ProducerClock producerClock,
      Random random,
      RequestLedger ledger) {
    this.shape = shape;
    this.layouts = shape.decoderLayouts();
    this.producerClock = producerClock;
    this.random = random;
    this.ledger = ledger;
    this.connector =
        starter.start(
            engineId,
            Role.CONSUMER,
            shape.decoderTp(),
            decoderClock,
            ConnectorObserver.NONE,
            agents);
    this.memories = EngineStarter.registerKvCaches(connector, layouts);
    for (int b = 0; b < shape.decoderBlocks(); b++) {
      free.add(b);
    }
  }

  String engineId() {
    return connector.settings().engineId();
  }

  /** The consumer's part of its connector's status. */
  ConsumerStatus status() {
    return connector.status().consumer().orElseThrow();
  }

  /** The names of its agents, by rank. */
  List<String> agentNames() {
    return agents.stream().map(Transport::agentName).toList();
  }

  /** How many blocks of its pool are free now. */
  int freeBlocks() {
    return free.size();
  }

  /** The parameters of every request whose load ended, failed or was refused, in that order. */
  List<TransferParams> finishedParams() {
    return Collections.unmodifiableList(finishedParams);
  }

  /** Whether this start of D decoded {@code id} from the KV it loaded. */
  boolean served(String id) {
    return servedIds.contains(id);
  }

  /**
   * Whether D still asks its connector about a request, to allocate its blocks at the next step.
   */
  boolean stillAsking() {
    return !asking.isEmpty();
  }

  void accept(String id, TransferParams params, int localTokens) {
    accept(id, params, Prompts.of(id, params.tokens()), localTokens);
  }

  /** The handshake request this start of D sends, as someone who captured it holds it. */
  Handshake.Request request() {
    return new Handshake.Request(
        connector.settings().engineId(),
        connector.settings().incarnation(),
        layouts,
        agents.get(0).localMetadata());
  }

  /** Accepts parameters that do not belong to this request's prompt or blocks: never served. */
  void acceptNeverToBeServed(String id, TransferParams params, TokenIds prompt) {
    ledger.recordNeverToBeServed(List.of(id));
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
          producerClock.duringDecoderCall(
              () -> connector.scheduler().matchRemote(id, a.prompt(), a.localTokens(), a.params()));
    } catch (InvalidTransferParamsException e) {
      asking.remove(id);
      ledger.recordFailure(e.getMessage());
      return;
    }
    if (match instanceof LoadMatch.Unavailable unavailable) {
      asking.remove(id);
      finishedParams.add(a.params());
      ledger.recordFailure(unavailable.reason());
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
        ledger.recordServedHeldInFull(id);
        finishedParams.add(a.params());
        return;
      }
      if (first > 0) {
        ledger.recordPartlyLocal();
      }
      int needed = (tokens + shape.decoderBlockTokens() - 1) / shape.decoderBlockTokens();
      List<Integer> blocks = new ArrayList<>();
      while (blocks.size() < needed && !free.isEmpty()) {
        blocks.add(free.poll());
      }
      holdPrefix(id, blocks, first);
      pending.put(id, new Loading(blocks, a.params()));
      producerClock.duringDecoderCall(
          () -> {
            connector.scheduler().afterAllocate(id, blocks);
            return null;
          });
    }
  }

  /**
   * Puts into the request's blocks what D holds before the load: in the blocks before token {@code
   * first} (whole blocks: shared prefix blocks in a real engine) the prompt's own KV, which D
   * computed; in the others, on which the load writes, whatever their last user left.
   */
  private void holdPrefix(String id, List<Integer> blocks, int first) {
    long seed = ledger.prompt(id).seed();
    for (int r = 0; r < shape.decoderTp(); r++) {
      KvLayout layout = layouts.get(r);
      for (int i = 0; i < blocks.size(); i++) {
        byte[] block = new byte[layout.blockBytes()];
        int from = i * layout.tokensPerBlock();
        if (from < first) {
          KvContent.write(layout, block, seed, from, layout.tokensPerBlock());
        } else {
          random.nextBytes(block);
        }
        memories.get(r).writeBlock(blocks.get(i), block);
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
   * The client went away: D cancels the load in whatever state it is and frees its blocks at once,
   * as {@code cancelLoad} allows. The connector must report nothing about it afterwards.
   */
  void cancel(String id) {
    if (!producerClock.duringDecoderCall(
        () -> connector.scheduler().cancelLoad(id, "client aborted on D"))) {
      throw new AssertionError("D's connector did not know the load of " + id + " D waits for");
    }
    cancelled.add(id);
    ledger.recordCancelledOnDecoder(id);
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
    producerClock.duringDecoderCall(
        () -> {
          connector.worker().sweep();
          return null;
        });
  }

  void step() {
    producerClock.duringDecoderCall(
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
      if (ledger.mustNotBeServed(id)) {
        throw new AssertionError(
            "request "
                + id
                + " was served from a forged block list, another prompt's KV, or a lease that"
                + " ended with its producer's process");
      }
      List<Integer> blocks = end(id);
      checkHoldsThePrompt(id, blocks);
      servedIds.add(id);
      ledger.recordServedFromLoad(id);
    }
    for (LoadFailure failure : finished.failedLoads()) {
      if (cancelled.contains(failure.requestId())) {
        throw new AssertionError(
            "request " + failure.requestId() + " was reported failed after D cancelled it");
      }
      end(failure.requestId());
      ledger.recordFailure(failure.reason());
    }
  }

  /**
   * What D decodes {@code id} from: on every rank, every byte of every head it holds of every token
   * of the prompt must be the KV P computed for it.
   */
  private void checkHoldsThePrompt(String id, List<Integer> blocks) {
    RequestLedger.Prompt prompt = ledger.prompt(id);
    for (int r = 0; r < shape.decoderTp(); r++) {
      KvLayout layout = layouts.get(r);
      for (int i = 0; i < blocks.size(); i++) {
        int used = KvBlocks.usedTokens(i, layout.tokensPerBlock(), prompt.tokens());
        if (used == 0) {
          break;
        }
        Optional<String> wrong =
            KvContent.firstDifference(
                layout,
                memories.get(r).readBlock(blocks.get(i)),
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

  /** Sends P a completion for {@code lease} from its lead agent, as D's connector would. */
  void sendCompletion(LeaseRef lease) {
    try {
      agents
          .get(0)
          .notify(ProducerEngine.ID, Messages.completion(lease, connector.settings().engineId()));
    } catch (RuntimeException unreachable) {
      // D never handshook with P yet: the forged message cannot even be addressed.
    }
  }

  /** Every request ended on D, and every block is back in its pool. */
  void checkEverythingEnded() {
    if (!pending.isEmpty() || !asking.isEmpty()) {
      throw new AssertionError("requests never ended on D: " + pending.keySet() + asking.keySet());
    }
    if (free.size() != shape.decoderBlocks()) {
      throw new AssertionError("D leaked " + (shape.decoderBlocks() - free.size()) + " blocks");
    }
  }

  void close() {
    try {
      connector.close();
    } catch (RuntimeException deadAgent) {
      // A killed engine's agents are already gone.
    }
    memories.forEach(m -> m.regions().forEach(KvMemory::close));
  }

  /** A request D lent blocks to for its load. */
  private record Loading(List<Integer> blocks, TransferParams params) {}

  /** A request the decoder keeps asking the connector about until its lease is confirmed. */
  private record Asking(TransferParams params, TokenIds prompt, int localTokens) {}
}
