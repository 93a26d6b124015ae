package io.kvbridge.sample.engine;

import io.kvbridge.sample.engine.Generation.KvSource;
import io.kvbridge.spi.FinishDecision;
import io.kvbridge.spi.FinishedRequest;
import io.kvbridge.spi.FinishedTransfers;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.LoadFailure;
import io.kvbridge.spi.LoadFailurePolicy;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.LoadSpec;
import io.kvbridge.spi.SchedulerSide;
import io.kvbridge.spi.StartedRequest;
import io.kvbridge.spi.StepMetadata;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an {@link Engine} does in one step, and the tables of the requests it holds between steps:
 * admits waiting requests while blocks are free, asks the connector about each remote prefill
 * ({@code matchRemote} → allocate → {@code afterAllocate}), computes what is not loaded, generates,
 * reports finished requests ({@code requestFinished}) and holds their blocks for a consumer while
 * the connector says so, starts the step's loads, and applies what {@code getFinished} reports:
 * blocks no longer read go to the prefix cache, received loads are completed, failed loads are
 * handled under the {@link LoadFailurePolicy}. Cancellations are applied between steps, wherever
 * the request is.
 *
 * <p>Threads: the engine thread only; the queues it drains are filled from any thread.
 */
final class StepScheduler {

  private static final Logger LOG = LoggerFactory.getLogger(Engine.class);

  private final KvConnector connector;
  private final String engineId;
  private final EngineShape shape;
  private final ToyModel model;
  private final LoadFailurePolicy policy;
  private final BlockPool pool;
  private final PrefixCache cache;
  private final EngineCounters counters;
  private final EngineBlocks work;
  private final Queue<PendingRequest> inbox;
  private final Queue<CancelRequest> cancels;

  // Every request taken from the inbox whose future is not complete yet, so that a dying loop
  // fails each of them, wherever it is.
  private final Set<PendingRequest> inFlight = Collections.newSetFromMap(new IdentityHashMap<>());
  private final ArrayDeque<PendingRequest> waiting = new ArrayDeque<>();
  // Requests whose producer has not confirmed the lease yet: they hold no blocks and are asked
  // about again every step.
  private final ArrayDeque<PendingRequest> confirming = new ArrayDeque<>();
  private final Map<String, Loading> loading = new HashMap<>();
  private final Map<String, Held> heldForTransfer = new HashMap<>();
  // Cancelled loads the connector no longer knew: their outcome is still to be reported, and only
  // then may their blocks be freed.
  private final Set<String> cancelledLoads = new HashSet<>();

  StepScheduler(
      KvConnector connector,
      EngineShape shape,
      ToyModel model,
      LoadFailurePolicy policy,
      BlockPool pool,
      PrefixCache cache,
      EngineCounters counters,
      Queue<PendingRequest> inbox,
      Queue<CancelRequest> cancels,
      Duration prefillCost) {
    this.connector = connector;
    this.engineId = connector.settings().engineId();
    this.shape = shape;
    this.model = model;
    this.policy = policy;
    this.pool = pool;
    this.cache = cache;
    this.counters = counters;
    this.work = new EngineBlocks(engineId, shape, model, pool, cache, prefillCost);
    this.inbox = inbox;
    this.cancels = cancels;
  }

  /**
   * Fails every request held, wherever it is, with {@code cause}, and forgets them all; the engine
   * thread does no more steps when this runs.
   */
  void failAll(RuntimeException cause) {
    for (PendingRequest p : List.copyOf(inFlight)) {
      fail(p, cause);
    }
    waiting.clear();
    confirming.clear();
    loading.clear();
    heldForTransfer.clear();
    cancelledLoads.clear();
    counters.waitingCount = 0;
    counters.loadingCount = 0;
    counters.heldForTransferCount = 0;
  }

  void accept(PendingRequest p) {
    inFlight.add(p);
    waiting.addLast(p);
  }

  /** One engine step; runs on the engine thread. */
  void step() {
    Set<String> finishedThisStep = new HashSet<>();
    applyCancels();
    admit(finishedThisStep);
    SchedulerSide scheduler = connector.scheduler();
    StepMetadata metadata = scheduler.buildStepMetadata();
    try {
      connector.worker().startLoad(metadata);
    } catch (RuntimeException e) {
      LOG.error("engine {} could not start {} loads", engineId, metadata.loadsToStart().size(), e);
      for (LoadSpec spec : metadata.loadsToStart()) {
        loadFailed(
            spec.requestId(), "the load could not be started: " + e.getMessage(), finishedThisStep);
      }
    }
    FinishedTransfers finished = connector.worker().getFinished(finishedThisStep);
    for (String requestId : finished.doneSending()) {
      Held held = heldForTransfer.remove(requestId);
      if (held == null) {
        LOG.warn(
            "engine {}: lease of {} ended but no blocks were held for it", engineId, requestId);
      } else {
        // Nobody reads the blocks any more: their KV may serve a later prompt.
        cache.keep(held.tokens, held.blocks);
      }
    }
    for (String requestId : finished.doneReceiving()) {
      Loading l = loading.remove(requestId);
      if (l == null) {
        LOG.warn("engine {}: {} was received but is not loading", engineId, requestId);
        continue;
      }
      if (cancelledLoads.remove(requestId)) {
        pool.free(l.blocks());
        continue;
      }
      received(l, finishedThisStep);
    }
    for (LoadFailure failure : finished.failedLoads()) {
      loadFailed(failure.requestId(), failure.reason(), finishedThisStep);
    }
    publishCounts();
    cache.flushEvents();
  }

  private void publishCounts() {
    counters.waitingCount = waiting.size() + confirming.size();
    counters.loadingCount = loading.size();
    counters.heldForTransferCount = heldForTransfer.size();
  }

  private void applyCancels() {
    for (CancelRequest c = cancels.poll(); c != null; c = cancels.poll()) {
      try {
        CancelOutcome outcome = cancelNow(c.requestId(), c.why());
        // The stats say what the outcome did by the time the caller hears of it.
        publishCounts();
        c.done().complete(outcome);
      } catch (RuntimeException e) {
        c.done().completeExceptionally(e);
        throw e;
      }
    }
  }

  /** Cancels one request between steps; runs on the engine thread. */
  private CancelOutcome cancelNow(String id, String why) {
    for (PendingRequest p = inbox.poll(); p != null; p = inbox.poll()) {
      accept(p);
    }
    Optional<PendingRequest> waitingOne = PendingRequest.removeById(waiting, id);
    if (waitingOne.isPresent()) {
      fail(waitingOne.get(), new RequestCancelledException(id, why));
      return CancelOutcome.WITHDRAWN;
    }
    SchedulerSide scheduler = connector.scheduler();
    Optional<PendingRequest> confirmingOne = PendingRequest.removeById(confirming, id);
    if (confirmingOne.isPresent()) {
      // No block is committed to a load that is not confirmed yet.
      scheduler.cancelLoad(id, why);
      fail(confirmingOne.get(), new RequestCancelledException(id, why));
      return CancelOutcome.LOAD_CANCELLED;
    }
    Loading l = loading.get(id);
    if (l != null) {
      if (scheduler.cancelLoad(id, why)) {
        // The connector guarantees no further byte lands in the blocks once this returns.
        loading.remove(id);
        pool.free(l.blocks());
      } else {
        // Its outcome is already on the way; the blocks are freed when it is reported.
        cancelledLoads.add(id);
      }
      fail(l.pending(), new RequestCancelledException(id, why));
      return CancelOutcome.LOAD_CANCELLED;
    }
    if (heldForTransfer.containsKey(id) && scheduler.revoke(id, why)) {
      return CancelOutcome.LEASE_REVOKED;
    }
    return CancelOutcome.NOT_FOUND;
  }

  private void admit(Set<String> finishedThisStep) {
    for (PendingRequest p = inbox.poll(); p != null; p = inbox.poll()) {
      accept(p);
    }
    // Requests whose lease was not confirmed yet are asked about again; they keep their turn.
    for (int n = confirming.size(); n > 0 && !confirming.isEmpty(); n--) {
      PendingRequest p = confirming.pollFirst();
      if (work.available() < work.blocksFor(p.tokens.length)) {
        confirming.addLast(p);
        continue;
      }
      try {
        begin(p, finishedThisStep);
      } catch (RuntimeException e) {
        fail(p, e);
      }
    }
    // First come, first served: a large request at the head waits for blocks rather than being
    // overtaken forever by small ones.
    while (!waiting.isEmpty()
        && work.available() >= work.blocksFor(waiting.peekFirst().tokens.length)) {
      PendingRequest p = waiting.pollFirst();
      try {
        begin(p, finishedThisStep);
      } catch (RuntimeException e) {
        fail(p, e);
      }
    }
  }

  private void begin(PendingRequest p, Set<String> finishedThisStep) {
    EngineRequest request = p.request;
    String id = request.requestId();
    int tokens = p.tokens.length;
    if (p.hit == null) {
      // Once per request: the connector keeps the local tokens of its first matchRemote, so the
      // hit stays pinned until the request has copied it.
      p.hit = cache.lookup(p.tokens);
    }
    Optional<TransferParams> params = request.transferParams();
    if (params.isEmpty()) {
      computeHere(p, KvSource.COMPUTED, finishedThisStep);
      return;
    }
    SchedulerSide scheduler = connector.scheduler();
    LoadMatch answer =
        scheduler.matchRemote(id, TokenIds.of(p.tokens), p.hit.tokens(), params.get());
    if (answer instanceof LoadMatch.Pending) {
      confirming.addLast(p);
      return;
    }
    if (answer instanceof LoadMatch.Unavailable unavailable) {
      unavailable(p, unavailable.reason(), finishedThisStep);
      return;
    }
    LoadMatch.Ready match = (LoadMatch.Ready) answer;
    boolean loads = match.externalTokens() > 0;
    // With nothing to load every token of the lease is in the cache; else the load writes from
    // firstToken on, and only the prefix below it is taken from the cache.
    int local = loads ? match.firstToken() : p.hit.tokens();
    List<Integer> blocks = List.of();
    try {
      if (local > p.hit.tokens() || (!loads && local < params.get().tokens())) {
        throw new IllegalStateException(
            "the connector answered "
                + match
                + " but the prefix cache holds "
                + p.hit.tokens()
                + " of the prompt's tokens");
      }
      blocks = work.allocate(work.blocksFor(tokens));
      copyFromCache(p, local, blocks);
      if (!loads) {
        work.compute(p.tokens, blocks, local);
      }
    } catch (RuntimeException e) {
      if (loads) {
        // Hand the connector no blocks: it fails the accepted load instead of keeping it forever.
        scheduler.afterAllocate(id, List.of());
      }
      if (!blocks.isEmpty()) {
        pool.free(blocks);
      }
      throw e;
    }
    if (!loads) {
      finish(
          p,
          blocks,
          Optional.empty(),
          KvSource.CACHED,
          new Sources(local, 0, tokens - local),
          finishedThisStep);
      return;
    }
    try {
      scheduler.afterAllocate(id, blocks);
    } catch (RuntimeException e) {
      pool.free(blocks);
      throw e;
    }
    // From here the connector borrows the blocks from firstToken on: they are freed only when it
    // reports the load received or failed.
    loading.put(id, new Loading(p, blocks, local, match.externalTokens()));
  }

  /** The load of {@code l} arrived: the tokens past the producer's are computed, then generated. */
  private void received(Loading l, Set<String> finishedThisStep) {
    int tokens = l.pending().tokens.length;
    int end = l.firstToken() + l.loadedTokens();
    try {
      work.compute(l.pending().tokens, l.blocks(), end);
    } catch (RuntimeException e) {
      pool.free(l.blocks());
      fail(l.pending(), e);
      return;
    }
    counters.loadedBlocks.addAndGet(work.blocksFor(end) - l.firstToken() / shape.tokensPerBlock());
    finish(
        l.pending(),
        l.blocks(),
        Optional.empty(),
        KvSource.LOADED,
        new Sources(l.firstToken(), l.loadedTokens(), tokens - end),
        finishedThisStep);
  }

  /**
   * Generates from the request's KV ({@code kv} when given, else read from its blocks), tells the
   * connector, and holds the blocks for a consumer or gives them to the prefix cache.
   */
  private void finish(
      PendingRequest p,
      List<Integer> blocks,
      Optional<byte[]> kv,
      KvSource source,
      Sources sources,
      Set<String> finishedThisStep) {
    EngineRequest request = p.request;
    FinishDecision decision;
    List<String> words;
    try {
      byte[] prompt = kv.isPresent() ? kv.get() : pool.readTokens(blocks, p.tokens.length);
      words = model.generate(prompt, request.maxTokens());
      decision =
          connector
              .scheduler()
              .requestFinished(
                  new FinishedRequest(
                      request.requestId(),
                      blocks,
                      TokenIds.of(p.tokens),
                      p.tokens.length,
                      false,
                      request.remoteDecode()));
    } catch (RuntimeException e) {
      pool.free(blocks);
      fail(p, e);
      return;
    }
    finishedThisStep.add(request.requestId());
    if (decision.delayFree()) {
      heldForTransfer.put(request.requestId(), new Held(p.tokens, blocks));
    } else {
      cache.keep(p.tokens, blocks);
    }
    counters.cachedTokens.addAndGet(sources.cached);
    counters.loadedTokens.addAndGet(sources.loaded);
    counters.computedTokens.addAndGet(sources.computed);
    counters.completed.incrementAndGet();
    inFlight.remove(p);
    p.future.complete(
        new Generation(
            request.requestId(),
            words,
            p.tokens.length,
            source,
            sources.cached,
            sources.loaded,
            sources.computed,
            decision.params()));
  }

  /** The KV of a request that holds no blocks yet cannot be loaded: the policy decides. */
  private void unavailable(PendingRequest p, String reason, Set<String> finishedThisStep) {
    String id = p.request.requestId();
    if (policy == LoadFailurePolicy.RECOMPUTE) {
      LOG.info("engine {}: KV of {} unavailable ({}); recomputing locally", engineId, id, reason);
      counters.recomputed.incrementAndGet();
      computeHere(p, KvSource.RECOMPUTED, finishedThisStep);
      return;
    }
    fail(p, new KvLoadFailedException(id, reason));
  }

  private void loadFailed(String requestId, String reason, Set<String> finishedThisStep) {
    Loading l = loading.remove(requestId);
    if (l == null) {
      LOG.warn(
          "engine {}: load of {} failed but it is not loading: {}", engineId, requestId, reason);
      return;
    }
    if (cancelledLoads.remove(requestId)) {
      pool.free(l.blocks());
      return;
    }
    if (policy == LoadFailurePolicy.RECOMPUTE) {
      LOG.info(
          "engine {}: load of {} failed ({}); recomputing locally", engineId, requestId, reason);
      counters.recomputed.incrementAndGet();
      int tokens = l.pending().tokens.length;
      try {
        // The load writes nothing below its first token: the prefix copied from the cache stands.
        work.compute(l.pending().tokens, l.blocks(), l.firstToken());
      } catch (RuntimeException e) {
        pool.free(l.blocks());
        fail(l.pending(), e);
        return;
      }
      finish(
          l.pending(),
          l.blocks(),
          Optional.empty(),
          KvSource.RECOMPUTED,
          new Sources(l.firstToken(), 0, tokens - l.firstToken()),
          finishedThisStep);
      return;
    }
    pool.free(l.blocks());
    fail(l.pending(), new KvLoadFailedException(requestId, reason));
  }

  /**
   * Copies the request's cached prefix into its own blocks, computes the rest and generates. A
   * request a decode node will read is streamed when the connector grants its lease as the prefill
   * starts ({@code requestStarted}): its caller gets the transfer parameters at once, and each
   * layer is reported saved on every rank as it is written, so the decode node reads it while the
   * next ones compute.
   */
  private void computeHere(PendingRequest p, KvSource source, Set<String> finishedThisStep) {
    int tokens = p.tokens.length;
    int local = p.hit.tokens();
    List<Integer> blocks = work.allocate(work.blocksFor(tokens));
    byte[] computed;
    try {
      copyFromCache(p, local, blocks);
      Optional<TransferParams> streamed =
          p.streamable() && local < tokens
              ? connector
                  .scheduler()
                  .requestStarted(
                      new StartedRequest(
                          p.request.requestId(), blocks, TokenIds.of(p.tokens), tokens))
              : Optional.empty();
      if (streamed.isPresent()) {
        counters.streamed.incrementAndGet();
        p.leased(streamed.get());
        String id = p.request.requestId();
        computed =
            work.compute(
                p.tokens,
                blocks,
                local,
                layer -> {
                  for (int rank = 0; rank < shape.tpDegree(); rank++) {
                    connector.worker(rank).layerSaved(id, layer);
                  }
                });
      } else {
        computed = work.compute(p.tokens, blocks, local);
      }
    } catch (RuntimeException e) {
      pool.free(blocks);
      throw e;
    }
    // Computed whole here: generate from the KV just computed rather than read it back.
    Optional<byte[]> whole = local == 0 ? Optional.of(computed) : Optional.empty();
    finish(p, blocks, whole, source, new Sources(local, 0, tokens - local), finishedThisStep);
  }

  /**
   * Copies the cached blocks holding the prompt's first {@code tokens} tokens (whole blocks, or the
   * whole prompt) into the request's first blocks, then unpins the hit.
   */
  private void copyFromCache(PendingRequest p, int tokens, List<Integer> into) {
    try {
      work.copyPrefix(p.hit, tokens, into);
    } finally {
      releaseHit(p);
    }
  }

  private void releaseHit(PendingRequest p) {
    if (p.hit != null && !p.hit.isMiss()) {
      cache.release(p.hit);
    }
    p.hit = PrefixCache.MISS;
  }

  void fail(PendingRequest p, Throwable cause) {
    releaseHit(p);
    counters.failed.incrementAndGet();
    inFlight.remove(p);
    p.future.completeExceptionally(cause);
  }

  /** A finished request's blocks, held until a consumer's lease on them ends. */
  private record Held(int[] tokens, List<Integer> blocks) {}

  /** Where a prompt's tokens came from: the prefix cache, a producer, this engine. */
  private record Sources(int cached, int loaded, int computed) {}
}
