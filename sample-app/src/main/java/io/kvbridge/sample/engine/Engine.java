package io.kvbridge.sample.engine;

import io.kvbridge.layout.KvLayout;
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
import io.kvbridge.spi.StepMetadata;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.spi.WorkerSide;
import io.kvbridge.transfer.KvMemory;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A small inference engine that drives a kvbridge connector exactly as a real engine does: {@link
 * EngineShape#tpDegree() tensor-parallel ranks} that each allocate and register their share of the
 * KV heads through {@code connector.worker(rank)}, a {@link BlockPool} whose block ids every rank
 * shares, a {@link PrefixCache}, a {@link ToyModel}, and a step loop on its own thread.
 *
 * <p>Each step (every {@code stepInterval}, also when idle, so finished leases are reclaimed on an
 * idle engine too):
 *
 * <ol>
 *   <li>admits waiting requests while blocks are free (the prefix cache gives back its least
 *       recently used blocks when they are not). Each request first looks up the longest prefix the
 *       prefix cache holds. A request with a producer's transfer parameters then goes {@code
 *       matchRemote} (with that prefix as its local tokens) → allocate → {@code afterAllocate}; the
 *       cached prefix below {@link LoadMatch.Ready#firstToken()} is copied into the request's own
 *       blocks, so the connector writes only into blocks no other request reads. Any other request
 *       copies its cached prefix, computes the rest here, generates, and is reported with {@code
 *       requestFinished}: if the connector delays the free (a decode node will read the blocks),
 *       the blocks stay held until {@code doneSending} names the request;
 *   <li>{@code buildStepMetadata} → {@code startLoad};
 *   <li>{@code getFinished}: {@code doneSending} gives held blocks to the prefix cache; {@code
 *       doneReceiving} computes what the producer did not hold and generates from the KV; {@code
 *       failedLoads} applies the {@link LoadFailurePolicy}.
 * </ol>
 *
 * <p>A request's blocks go to the prefix cache when the engine is done with them, which keeps what
 * it can and frees the rest.
 *
 * <p>A request is refused at {@link #submit} unless its prompt and {@code max_tokens} fit the
 * {@link ContextWindow}. A {@link RuntimeException} in a step is logged and the loop goes on;
 * anything else that escapes a step (an {@link Error} such as {@link OutOfMemoryError}) ends the
 * loop, and the engine {@linkplain EngineState.Failed fails}: every request it held fails at once
 * with {@link EngineFailedException}, later ones are refused the same way, and the connector is
 * closed so that its leases are revoked.
 *
 * <p>A request may be {@linkplain #cancel cancelled} wherever it is (e.g. its client went away): a
 * waiting request leaves the queue, a load is cancelled through the connector, and the lease of a
 * finished request whose blocks are held for a consumer is revoked.
 *
 * <p>Threads: {@link #submit}, {@link #cancel}, {@link #stats}, {@link #state} and {@link #close}
 * may be called from any thread; everything that touches the connector's scheduler and worker
 * sides, and the request tables, runs on the engine thread.
 */
public final class Engine implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Engine.class);

  private final KvConnector connector;
  private final String engineId;
  private final EngineShape shape;
  private final ContextWindow context;
  private final ToyModel model;
  private final LoadFailurePolicy policy;
  private final Duration stepInterval;
  private final LinkedBlockingQueue<Pending> inbox = new LinkedBlockingQueue<>();
  private final ConcurrentLinkedQueue<Cancel> cancels = new ConcurrentLinkedQueue<>();

  // Engine thread only. Every request taken from the inbox whose future is not complete yet, so
  // that a dying loop fails each of them, wherever it is.
  private final Set<Pending> inFlight = Collections.newSetFromMap(new IdentityHashMap<>());
  private final ArrayDeque<Pending> waiting = new ArrayDeque<>();
  // Requests whose producer has not confirmed the lease yet: they hold no blocks and are asked
  // about again every step.
  private final ArrayDeque<Pending> confirming = new ArrayDeque<>();
  private final Map<String, Loading> loading = new HashMap<>();
  private final Map<String, Held> heldForTransfer = new HashMap<>();
  // Cancelled loads the connector no longer knew: their outcome is still to be reported, and only
  // then may their blocks be freed.
  private final Set<String> cancelledLoads = new HashSet<>();

  private final AtomicLong completed = new AtomicLong();
  private final AtomicLong failed = new AtomicLong();
  private final AtomicLong loadedBlocks = new AtomicLong();
  private final AtomicLong loadedTokens = new AtomicLong();
  private final AtomicLong cachedTokens = new AtomicLong();
  private final AtomicLong computedTokens = new AtomicLong();
  private final AtomicLong recomputed = new AtomicLong();
  private volatile int waitingCount;
  private volatile int loadingCount;
  private volatile int heldForTransferCount;

  private final Object lifecycle = new Object();
  // Each rank's KV memory, as allocated; freed on close.
  private final List<KvMemory> memories = new ArrayList<>();
  private BlockPool pool;
  // Set once by start(); used on the engine thread only, but for its size, which stats() reads.
  private volatile PrefixCache cache;
  private Thread thread;
  private volatile boolean running;
  private volatile boolean closed;
  // Set once, on the engine thread, before running turns false when the step loop dies.
  private volatile Throwable failure;
  // Test seam: run at the start of the next step, to fail a step from outside.
  private final AtomicReference<Runnable> nextStepFault = new AtomicReference<>();

  /**
   * An engine over {@code connector}, not yet started.
   *
   * @param connector this engine's connector, with one rank per rank of {@code shape}; the engine
   *     closes it on {@link #close()} before it frees the KV memory
   * @param shape the KV cache to allocate: the model's layout, the ranks, the prefix cache
   * @param policy what to do when a load fails
   * @param stepInterval how long an idle engine waits between steps
   * @param context how many tokens a request's prompt and completion may hold together
   */
  public Engine(
      KvConnector connector,
      EngineShape shape,
      LoadFailurePolicy policy,
      Duration stepInterval,
      ContextWindow context) {
    this.connector = Objects.requireNonNull(connector, "connector");
    this.engineId = connector.settings().engineId();
    this.shape = Objects.requireNonNull(shape, "shape");
    this.context = Objects.requireNonNull(context, "context");
    this.policy = Objects.requireNonNull(policy, "policy");
    this.stepInterval = Objects.requireNonNull(stepInterval, "stepInterval");
    if (stepInterval.isNegative() || stepInterval.isZero()) {
      throw new IllegalArgumentException("step interval must be positive, got " + stepInterval);
    }
    if (connector.settings().tpDegree() != shape.tpDegree()) {
      throw new IllegalArgumentException(
          "engine "
              + engineId
              + " has "
              + shape.tpDegree()
              + " ranks but its connector "
              + connector.settings().tpDegree());
    }
    this.model = new ToyModel(shape.bytesPerToken());
  }

  /**
   * Allocates each rank's share of the KV cache through the connector ({@code
   * worker(rank).allocateKvCache}), registers it ({@code registerKvCache}) and starts the step
   * loop.
   */
  public void start() {
    synchronized (lifecycle) {
      if (thread != null || closed) {
        throw new IllegalStateException("engine " + engineId + " was already started");
      }
      List<KvLayout> ranks = new ArrayList<>();
      for (int rank = 0; rank < shape.tpDegree(); rank++) {
        KvLayout layout = shape.rank(rank);
        WorkerSide worker = connector.worker(rank);
        KvMemory memory = worker.allocateKvCache(layout);
        memories.add(memory);
        worker.registerKvCache(memory, layout);
        ranks.add(layout);
      }
      pool = new BlockPool(ranks, memories);
      cache = new PrefixCache(pool, shape.prefixCacheBlocks());
      running = true;
      thread = new Thread(this::run, "engine-" + engineId);
      thread.setDaemon(true);
      thread.start();
      LOG.info(
          "engine {} started: TP {}, {} blocks of {} tokens ({} bytes per rank, {}) in {} memory,"
              + " prefix cache of up to {} blocks, load-failure policy {}",
          engineId,
          shape.tpDegree(),
          shape.blockCount(),
          shape.tokensPerBlock(),
          ranks.get(0).blockBytes(),
          shape.model().order().name().toLowerCase(Locale.ROOT).replace('_', '-'),
          memories.get(0).kind(),
          shape.prefixCacheBlocks(),
          policy);
    }
  }

  /** This engine's id. */
  public String engineId() {
    return engineId;
  }

  /** How this engine holds KV: the model's layout, its ranks, its prefix cache. */
  public EngineShape shape() {
    return shape;
  }

  /** How many tokens a request's prompt and completion may hold together. */
  public ContextWindow context() {
    return context;
  }

  /** The model this engine runs. */
  public ToyModel model() {
    return model;
  }

  /** The connector this engine drives. */
  public KvConnector connector() {
    return connector;
  }

  /**
   * Queues a request; the future completes on the engine thread. It fails at once with {@link
   * InvalidPromptException} for an empty prompt, one larger than the pool, or a prompt and {@code
   * max_tokens} beyond the {@link ContextWindow}; later with {@link
   * io.kvbridge.spi.InvalidTransferParamsException} when the connector refuses the transfer
   * parameters, with {@link KvLoadFailedException} when the load fails under policy {@code fail},
   * with {@link EngineClosedException} if the engine stops first, and with {@link
   * EngineFailedException} if its step loop dies first (at once if it already has).
   */
  public CompletableFuture<Generation> submit(EngineRequest request) {
    CompletableFuture<Generation> future = new CompletableFuture<>();
    int[] tokens = model.tokenize(request.prompt());
    if (tokens.length == 0) {
      return CompletableFuture.failedFuture(
          new InvalidPromptException("prompt", "prompt is empty"));
    }
    try {
      context.check(tokens.length, request.maxTokens());
    } catch (InvalidPromptException e) {
      return CompletableFuture.failedFuture(e);
    }
    int needed = blocksFor(tokens.length);
    if (needed > shape.blockCount()) {
      return CompletableFuture.failedFuture(
          new InvalidPromptException(
              "prompt",
              "prompt of "
                  + tokens.length
                  + " tokens needs "
                  + needed
                  + " blocks but the pool has "
                  + shape.blockCount()
                  + "; shorten the prompt or raise kvbridge.sample.engine.block-count"
                  + " (or the node's own kvbridge.sample.<node>.engine.block-count)"));
    }
    if (!running) {
      return CompletableFuture.failedFuture(stopped());
    }
    Pending pending = new Pending(request, tokens, future);
    inbox.add(pending);
    // The loop may have stopped since the check; whoever takes the request out fails it.
    if (!running && inbox.remove(pending)) {
      future.completeExceptionally(stopped());
    }
    return future;
  }

  /**
   * Cancels a request wherever it is, on the engine thread at its next step; the future says what
   * was done. A request still in progress fails with {@link RequestCancelledException}. A waiting
   * request is withdrawn. A load is cancelled through the connector ({@code cancelLoad}), which
   * tells the producer to release the lease; its blocks are freed once the connector says no byte
   * lands in them any more: at once when it knew the load, else when it reports the load's end. A
   * finished request whose blocks are held for a consumer has its lease revoked ({@code revoke});
   * the blocks come back at the next {@code doneSending}. Anything else is {@link
   * CancelOutcome#NOT_FOUND}.
   *
   * @param why the reason, logged by the connector and given to the request's caller
   */
  public CompletableFuture<CancelOutcome> cancel(String requestId, String why) {
    Cancel cancel = new Cancel(requestId, why, new CompletableFuture<>());
    if (!running) {
      // A stopped engine already failed every request and its connector revoked every lease.
      cancel.done.complete(CancelOutcome.NOT_FOUND);
      return cancel.done;
    }
    cancels.add(cancel);
    if (!running && cancels.remove(cancel)) {
      cancel.done.complete(CancelOutcome.NOT_FOUND);
    }
    return cancel.done;
  }

  /** Where this engine is in its life; callable from any thread. */
  public EngineState state() {
    Throwable dead = failure;
    if (dead != null) {
      return new EngineState.Failed(EngineFailedException.describe(engineId, dead));
    }
    if (closed) {
      return new EngineState.Closed();
    }
    return running ? new EngineState.Running() : new EngineState.NotStarted();
  }

  /** A snapshot of this engine's counters; callable from any thread. */
  public EngineStats stats() {
    BlockPool p = pool;
    PrefixCache c = cache;
    int cacheBlocks = c == null ? 0 : c.blocks();
    // The cache publishes its size after the pool changes, so this may over-count for a moment,
    // never under-count.
    int held = p == null ? 0 : Math.max(0, p.heldBlocks() - cacheBlocks);
    return new EngineStats(
        engineId,
        shape.tpDegree(),
        shape.blockCount(),
        held,
        cacheBlocks,
        heldForTransferCount,
        waitingCount + inbox.size(),
        loadingCount,
        completed.get(),
        failed.get(),
        loadedBlocks.get(),
        loadedTokens.get(),
        cachedTokens.get(),
        computedTokens.get(),
        recomputed.get());
  }

  /**
   * Stops the step loop, closes the connector (which revokes its leases and fails its loads), fails
   * every request still in progress with {@link EngineClosedException}, then frees the KV memory.
   * On an engine whose loop died, which closed the connector and failed the requests itself, only
   * the memory is left to free.
   */
  @Override
  public void close() {
    synchronized (lifecycle) {
      if (closed) {
        return;
      }
      closed = true;
      running = false;
      if (thread != null) {
        thread.interrupt();
        try {
          thread.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
          LOG.warn("engine {} step loop did not stop within 10 s", engineId);
        }
      }
      if (failure == null) {
        connector.close();
      }
      failEverything();
      memories.forEach(KvMemory::close);
      LOG.info("engine {} stopped", engineId);
    }
  }

  /**
   * Test seam: {@code fault} runs at the start of the next step, on the engine thread, as if the
   * step itself had thrown what it throws.
   */
  void injectIntoNextStep(Runnable fault) {
    nextStepFault.set(Objects.requireNonNull(fault, "fault"));
  }

  private void run() {
    try {
      while (running) {
        try {
          Pending next = inbox.poll(stepInterval.toNanos(), TimeUnit.NANOSECONDS);
          if (next != null) {
            accept(next);
          }
        } catch (InterruptedException e) {
          if (!running) {
            return;
          }
        }
        try {
          step();
        } catch (RuntimeException e) {
          // One bad step must not stop the engine: requests in flight would never finish.
          LOG.error("engine {} step failed; continuing with the next step", engineId, e);
        }
      }
    } catch (Throwable e) {
      // Whatever else escapes a step (an Error such as OutOfMemoryError) leaves the engine's
      // tables in an unknown state: stop serving, visibly, instead of leaving every request to
      // time out while the node looks healthy.
      die(e);
    }
  }

  /** Fails the engine after its loop died; runs on the engine thread, as the loop's last act. */
  private void die(Throwable cause) {
    failure = cause;
    running = false;
    LOG.error(
        "engine {} step loop died; failing every request and closing the connector",
        engineId,
        cause);
    failEverything();
    try {
      // Revokes the leases the engine granted: the blocks they name will never be freed now.
      connector.close();
    } catch (RuntimeException e) {
      LOG.error("engine {} could not close its connector after its step loop died", engineId, e);
    }
  }

  /**
   * Fails every request the engine holds or that waits in the inbox with {@link #stopped()}; the
   * engine thread does no more work when this runs.
   */
  private void failEverything() {
    for (Pending p = inbox.poll(); p != null; p = inbox.poll()) {
      fail(p, stopped());
    }
    for (Cancel c = cancels.poll(); c != null; c = cancels.poll()) {
      c.done.complete(CancelOutcome.NOT_FOUND);
    }
    for (Pending p : List.copyOf(inFlight)) {
      fail(p, stopped());
    }
    waiting.clear();
    confirming.clear();
    loading.clear();
    heldForTransfer.clear();
    cancelledLoads.clear();
    waitingCount = 0;
    loadingCount = 0;
    heldForTransferCount = 0;
  }

  /** Why a request cannot be served now that the loop has stopped. */
  private RuntimeException stopped() {
    Throwable dead = failure;
    return dead != null
        ? new EngineFailedException(engineId, dead)
        : new EngineClosedException(engineId);
  }

  private void accept(Pending p) {
    inFlight.add(p);
    waiting.addLast(p);
  }

  /** One engine step; runs on the engine thread. */
  private void step() {
    Runnable fault = nextStepFault.getAndSet(null);
    if (fault != null) {
      fault.run();
    }
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
        pool.free(l.blocks);
        continue;
      }
      received(l, finishedThisStep);
    }
    for (LoadFailure failure : finished.failedLoads()) {
      loadFailed(failure.requestId(), failure.reason(), finishedThisStep);
    }
    publishCounts();
  }

  private void publishCounts() {
    waitingCount = waiting.size() + confirming.size();
    loadingCount = loading.size();
    heldForTransferCount = heldForTransfer.size();
  }

  private void applyCancels() {
    for (Cancel c = cancels.poll(); c != null; c = cancels.poll()) {
      try {
        CancelOutcome outcome = cancelNow(c.requestId, c.why);
        // The stats say what the outcome did by the time the caller hears of it.
        publishCounts();
        c.done.complete(outcome);
      } catch (RuntimeException e) {
        c.done.completeExceptionally(e);
        throw e;
      }
    }
  }

  /** Cancels one request between steps; runs on the engine thread. */
  private CancelOutcome cancelNow(String id, String why) {
    for (Pending p = inbox.poll(); p != null; p = inbox.poll()) {
      accept(p);
    }
    Optional<Pending> waitingOne = removeById(waiting, id);
    if (waitingOne.isPresent()) {
      fail(waitingOne.get(), new RequestCancelledException(id, why));
      return CancelOutcome.WITHDRAWN;
    }
    SchedulerSide scheduler = connector.scheduler();
    Optional<Pending> confirmingOne = removeById(confirming, id);
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
        pool.free(l.blocks);
      } else {
        // Its outcome is already on the way; the blocks are freed when it is reported.
        cancelledLoads.add(id);
      }
      fail(l.pending, new RequestCancelledException(id, why));
      return CancelOutcome.LOAD_CANCELLED;
    }
    if (heldForTransfer.containsKey(id) && scheduler.revoke(id, why)) {
      return CancelOutcome.LEASE_REVOKED;
    }
    return CancelOutcome.NOT_FOUND;
  }

  private static Optional<Pending> removeById(ArrayDeque<Pending> queue, String id) {
    for (Iterator<Pending> it = queue.iterator(); it.hasNext(); ) {
      Pending p = it.next();
      if (p.request.requestId().equals(id)) {
        it.remove();
        return Optional.of(p);
      }
    }
    return Optional.empty();
  }

  private void admit(Set<String> finishedThisStep) {
    for (Pending p = inbox.poll(); p != null; p = inbox.poll()) {
      accept(p);
    }
    // Requests whose lease was not confirmed yet are asked about again; they keep their turn.
    for (int n = confirming.size(); n > 0 && !confirming.isEmpty(); n--) {
      Pending p = confirming.pollFirst();
      if (available() < blocksFor(p.tokens.length)) {
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
    while (!waiting.isEmpty() && available() >= blocksFor(waiting.peekFirst().tokens.length)) {
      Pending p = waiting.pollFirst();
      try {
        begin(p, finishedThisStep);
      } catch (RuntimeException e) {
        fail(p, e);
      }
    }
  }

  /** Blocks a request could be given now: free ones, and those the prefix cache would give up. */
  private int available() {
    return pool.freeBlocks() + cache.evictable();
  }

  private void begin(Pending p, Set<String> finishedThisStep) {
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
      blocks = allocate(blocksFor(tokens));
      copyFromCache(p, local, blocks);
      if (!loads) {
        compute(p, blocks, local);
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
      finish(p, blocks, KvSource.CACHED, new Sources(local, 0, tokens - local), finishedThisStep);
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
    int tokens = l.pending.tokens.length;
    int end = l.firstToken + l.loadedTokens;
    try {
      compute(l.pending, l.blocks, end);
    } catch (RuntimeException e) {
      pool.free(l.blocks);
      fail(l.pending, e);
      return;
    }
    loadedBlocks.addAndGet(blocksFor(end) - l.firstToken / shape.tokensPerBlock());
    finish(
        l.pending,
        l.blocks,
        KvSource.LOADED,
        new Sources(l.firstToken, l.loadedTokens, tokens - end),
        finishedThisStep);
  }

  /**
   * Generates from the request's KV, tells the connector, and holds the blocks for a consumer or
   * gives them to the prefix cache.
   */
  private void finish(
      Pending p,
      List<Integer> blocks,
      KvSource source,
      Sources sources,
      Set<String> finishedThisStep) {
    EngineRequest request = p.request;
    FinishDecision decision;
    List<String> words;
    try {
      words = model.generate(pool.readTokens(blocks, p.tokens.length), request.maxTokens());
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
    cachedTokens.addAndGet(sources.cached);
    loadedTokens.addAndGet(sources.loaded);
    computedTokens.addAndGet(sources.computed);
    completed.incrementAndGet();
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
  private void unavailable(Pending p, String reason, Set<String> finishedThisStep) {
    String id = p.request.requestId();
    if (policy == LoadFailurePolicy.RECOMPUTE) {
      LOG.info("engine {}: KV of {} unavailable ({}); recomputing locally", engineId, id, reason);
      recomputed.incrementAndGet();
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
      pool.free(l.blocks);
      return;
    }
    if (policy == LoadFailurePolicy.RECOMPUTE) {
      LOG.info(
          "engine {}: load of {} failed ({}); recomputing locally", engineId, requestId, reason);
      recomputed.incrementAndGet();
      int tokens = l.pending.tokens.length;
      try {
        // The load writes nothing below its first token: the prefix copied from the cache stands.
        compute(l.pending, l.blocks, l.firstToken);
      } catch (RuntimeException e) {
        pool.free(l.blocks);
        fail(l.pending, e);
        return;
      }
      finish(
          l.pending,
          l.blocks,
          KvSource.RECOMPUTED,
          new Sources(l.firstToken, 0, tokens - l.firstToken),
          finishedThisStep);
      return;
    }
    pool.free(l.blocks);
    fail(l.pending, new KvLoadFailedException(requestId, reason));
  }

  /** Copies the request's cached prefix into its own blocks, computes the rest and generates. */
  private void computeHere(Pending p, KvSource source, Set<String> finishedThisStep) {
    int tokens = p.tokens.length;
    int local = p.hit.tokens();
    List<Integer> blocks = allocate(blocksFor(tokens));
    try {
      copyFromCache(p, local, blocks);
      compute(p, blocks, local);
    } catch (RuntimeException e) {
      pool.free(blocks);
      throw e;
    }
    finish(p, blocks, source, new Sources(local, 0, tokens - local), finishedThisStep);
  }

  /**
   * Copies the cached blocks holding the prompt's first {@code tokens} tokens (whole blocks, or the
   * whole prompt) into the request's first blocks, then unpins the hit.
   */
  private void copyFromCache(Pending p, int tokens, List<Integer> blocks) {
    int count = blocksFor(tokens);
    try {
      pool.copyBlocks(p.hit.blockIds().subList(0, count), blocks.subList(0, count));
    } finally {
      releaseHit(p);
    }
  }

  /** Computes the KV of tokens {@code [from, end)} of the request into its blocks. */
  private void compute(Pending p, List<Integer> blocks, int from) {
    int to = p.tokens.length;
    if (from >= to) {
      return;
    }
    int bytesPerToken = model.bytesPerToken();
    byte[] kv = new byte[(to - from) * bytesPerToken];
    model.computeKv(
        p.tokens,
        from,
        to,
        (i, token) -> System.arraycopy(token, 0, kv, (i - from) * bytesPerToken, bytesPerToken));
    pool.writeTokens(blocks, from, to, kv);
  }

  /** Takes {@code count} blocks, evicting from the prefix cache as far as needed. */
  private List<Integer> allocate(int count) {
    int missing = count - pool.freeBlocks();
    if (missing > 0) {
      cache.evict(missing);
    }
    return pool.tryAllocate(count)
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "engine " + engineId + " checked for " + count + " free blocks but has fewer"));
  }

  private int blocksFor(int tokens) {
    return (tokens + shape.tokensPerBlock() - 1) / shape.tokensPerBlock();
  }

  private void releaseHit(Pending p) {
    if (p.hit != null && !p.hit.isMiss()) {
      cache.release(p.hit);
    }
    p.hit = PrefixCache.MISS;
  }

  private void fail(Pending p, Throwable cause) {
    releaseHit(p);
    failed.incrementAndGet();
    inFlight.remove(p);
    p.future.completeExceptionally(cause);
  }

  /** A request taken in, with its prefix cache hit once looked up. Engine thread only. */
  private static final class Pending {
    final EngineRequest request;
    final int[] tokens;
    final CompletableFuture<Generation> future;
    // Null until the first admission attempt looks the prompt up; MISS once the hit is released.
    PrefixCache.@Nullable Hit hit;

    Pending(EngineRequest request, int[] tokens, CompletableFuture<Generation> future) {
      this.request = request;
      this.tokens = tokens;
      this.future = future;
    }
  }

  /**
   * A request whose KV is being loaded into its blocks: tokens {@code [firstToken, firstToken +
   * loadedTokens)}; the ones before were copied from the prefix cache.
   */
  private record Loading(Pending pending, List<Integer> blocks, int firstToken, int loadedTokens) {}

  /** A finished request's blocks, held until a consumer's lease on them ends. */
  private record Held(int[] tokens, List<Integer> blocks) {}

  /** Where a prompt's tokens came from: the prefix cache, a producer, this engine. */
  private record Sources(int cached, int loaded, int computed) {}

  /** A request to cancel, and what came of it. */
  private record Cancel(String requestId, String why, CompletableFuture<CancelOutcome> done) {}
}
