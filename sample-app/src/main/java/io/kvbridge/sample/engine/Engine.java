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
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A small inference engine that drives a kvbridge connector exactly as a real engine does: a {@link
 * BlockPool} over the KV memory the connector allocated and registered, a {@link ToyModel}, and a
 * step loop on its own thread.
 *
 * <p>Each step (every {@code stepInterval}, also when idle, so finished leases are reclaimed on an
 * idle engine too):
 *
 * <ol>
 *   <li>admits waiting requests while blocks are free. A request with a producer's transfer
 *       parameters goes {@code matchRemote} → allocate → {@code afterAllocate}, and its partial
 *       tail is computed here; any other request is computed here, generates, and is reported with
 *       {@code requestFinished}: if the connector delays the free (a decode node will read the
 *       blocks), the blocks stay held until {@code doneSending} names the request;
 *   <li>{@code buildStepMetadata} → {@code startLoad};
 *   <li>{@code getFinished}: {@code doneSending} frees held blocks; {@code doneReceiving} generates
 *       from the loaded KV; {@code failedLoads} applies the {@link LoadFailurePolicy}.
 * </ol>
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
  private final KvLayout layout;
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
  private final Map<String, List<Integer>> heldForTransfer = new HashMap<>();
  // Cancelled loads the connector no longer knew: their outcome is still to be reported, and only
  // then may their blocks be freed.
  private final Set<String> cancelledLoads = new HashSet<>();

  private final AtomicLong completed = new AtomicLong();
  private final AtomicLong failed = new AtomicLong();
  private final AtomicLong loadedBlocks = new AtomicLong();
  private final AtomicLong loadedTokens = new AtomicLong();
  private final AtomicLong recomputed = new AtomicLong();
  private volatile int waitingCount;
  private volatile int loadingCount;
  private volatile int heldForTransferCount;

  private final Object lifecycle = new Object();
  private KvMemory memory;
  private BlockPool pool;
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
   * @param connector this engine's connector; the engine closes it on {@link #close()} before it
   *     frees the KV memory
   * @param layout the KV cache to allocate; its block size must be a multiple of tokens per block
   * @param policy what to do when a load fails
   * @param stepInterval how long an idle engine waits between steps
   * @param context how many tokens a request's prompt and completion may hold together
   */
  public Engine(
      KvConnector connector,
      KvLayout layout,
      LoadFailurePolicy policy,
      Duration stepInterval,
      ContextWindow context) {
    this.connector = Objects.requireNonNull(connector, "connector");
    this.engineId = connector.settings().engineId();
    this.layout = Objects.requireNonNull(layout, "layout");
    this.context = Objects.requireNonNull(context, "context");
    this.policy = Objects.requireNonNull(policy, "policy");
    this.stepInterval = Objects.requireNonNull(stepInterval, "stepInterval");
    if (stepInterval.isNegative() || stepInterval.isZero()) {
      throw new IllegalArgumentException("step interval must be positive, got " + stepInterval);
    }
    if (layout.blockBytes() % layout.tokensPerBlock() != 0) {
      throw new IllegalArgumentException(
          "block bytes ("
              + layout.blockBytes()
              + ") must be a multiple of tokens per block ("
              + layout.tokensPerBlock()
              + ")");
    }
    this.model = new ToyModel(layout.blockBytes() / layout.tokensPerBlock());
  }

  /**
   * Allocates the KV cache through the connector ({@code allocateKvCache}), registers it ({@code
   * registerKvCache}) and starts the step loop.
   */
  public void start() {
    synchronized (lifecycle) {
      if (thread != null || closed) {
        throw new IllegalStateException("engine " + engineId + " was already started");
      }
      WorkerSide worker = connector.worker();
      memory = worker.allocateKvCache(layout);
      worker.registerKvCache(memory, layout);
      pool = new BlockPool(memory, layout);
      running = true;
      thread = new Thread(this::run, "engine-" + engineId);
      thread.setDaemon(true);
      thread.start();
      LOG.info(
          "engine {} started: {} blocks of {} bytes ({} tokens each) in {} memory, load-failure"
              + " policy {}",
          engineId,
          layout.blockCount(),
          layout.blockBytes(),
          layout.tokensPerBlock(),
          memory.kind(),
          policy);
    }
  }

  /** This engine's id. */
  public String engineId() {
    return engineId;
  }

  /** The KV layout of this engine's pool. */
  public KvLayout layout() {
    return layout;
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
    if (needed > layout.blockCount()) {
      return CompletableFuture.failedFuture(
          new InvalidPromptException(
              "prompt",
              "prompt of "
                  + tokens.length
                  + " tokens needs "
                  + needed
                  + " blocks but the pool has "
                  + layout.blockCount()
                  + "; shorten the prompt or raise kvbridge.sample.engine.block-count"));
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
    return new EngineStats(
        engineId,
        layout.blockCount(),
        p == null ? 0 : p.heldBlocks(),
        heldForTransferCount,
        waitingCount + inbox.size(),
        loadingCount,
        completed.get(),
        failed.get(),
        loadedBlocks.get(),
        loadedTokens.get(),
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
      if (memory != null) {
        memory.close();
      }
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
      List<Integer> blocks = heldForTransfer.remove(requestId);
      if (blocks == null) {
        LOG.warn(
            "engine {}: lease of {} ended but no blocks were held for it", engineId, requestId);
      } else {
        pool.free(blocks);
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
      loadedBlocks.addAndGet(pool.blocksFor(l.loadedTokens));
      loadedTokens.addAndGet(l.loadedTokens);
      finish(l.pending, l.blocks, KvSource.LOADED, l.loadedTokens, finishedThisStep);
    }
    for (LoadFailure failure : finished.failedLoads()) {
      loadFailed(failure.requestId(), failure.reason(), finishedThisStep);
    }
    waitingCount = waiting.size() + confirming.size();
    loadingCount = loading.size();
    heldForTransferCount = heldForTransfer.size();
  }

  private void applyCancels() {
    for (Cancel c = cancels.poll(); c != null; c = cancels.poll()) {
      try {
        c.done.complete(cancelNow(c.requestId, c.why));
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
      if (pool.freeBlocks() < blocksFor(p.tokens.length)) {
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
        && pool.freeBlocks() >= blocksFor(waiting.peekFirst().tokens.length)) {
      Pending p = waiting.pollFirst();
      try {
        begin(p, finishedThisStep);
      } catch (RuntimeException e) {
        fail(p, e);
      }
    }
  }

  private void begin(Pending p, Set<String> finishedThisStep) {
    EngineRequest request = p.request;
    String id = request.requestId();
    int tokens = p.tokens.length;
    Optional<TransferParams> params = request.transferParams();
    if (params.isEmpty()) {
      List<Integer> blocks = allocate(blocksFor(tokens));
      try {
        compute(p, blocks, 0);
      } catch (RuntimeException e) {
        pool.free(blocks);
        throw e;
      }
      finish(p, blocks, KvSource.COMPUTED, 0, finishedThisStep);
      return;
    }
    SchedulerSide scheduler = connector.scheduler();
    LoadMatch answer = scheduler.matchRemote(id, TokenIds.of(p.tokens), 0, params.get());
    if (answer instanceof LoadMatch.Pending) {
      confirming.addLast(p);
      return;
    }
    if (answer instanceof LoadMatch.Unavailable unavailable) {
      unavailable(p, unavailable.reason(), finishedThisStep);
      return;
    }
    LoadMatch.Ready match = (LoadMatch.Ready) answer;
    List<Integer> blocks = List.of();
    try {
      blocks = allocate(blocksFor(tokens));
      // The tail past the loaded tokens lives in blocks the connector does not borrow.
      compute(p, blocks, match.externalTokens());
    } catch (RuntimeException e) {
      // Hand the connector no blocks: it fails the accepted load instead of keeping it forever.
      scheduler.afterAllocate(id, List.of());
      if (!blocks.isEmpty()) {
        pool.free(blocks);
      }
      throw e;
    }
    if (match.externalTokens() == 0) {
      finish(p, blocks, KvSource.COMPUTED, 0, finishedThisStep);
      return;
    }
    try {
      scheduler.afterAllocate(id, blocks);
    } catch (RuntimeException e) {
      pool.free(blocks);
      throw e;
    }
    // From here the connector borrows the loaded blocks: they are freed only when it reports the
    // load received or failed.
    loading.put(id, new Loading(p, blocks, match.externalTokens()));
  }

  /** Generates from the request's KV, tells the connector, and frees or holds the blocks. */
  private void finish(
      Pending p, List<Integer> blocks, KvSource source, int loaded, Set<String> finishedThisStep) {
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
      heldForTransfer.put(request.requestId(), blocks);
    } else {
      pool.free(blocks);
    }
    completed.incrementAndGet();
    inFlight.remove(p);
    p.future.complete(
        new Generation(
            request.requestId(), words, p.tokens.length, source, loaded, decision.params()));
  }

  /** The KV of a request that holds no blocks yet cannot be loaded: the policy decides. */
  private void unavailable(Pending p, String reason, Set<String> finishedThisStep) {
    String id = p.request.requestId();
    if (policy == LoadFailurePolicy.RECOMPUTE) {
      LOG.info("engine {}: KV of {} unavailable ({}); recomputing locally", engineId, id, reason);
      recomputed.incrementAndGet();
      List<Integer> blocks = allocate(blocksFor(p.tokens.length));
      try {
        compute(p, blocks, 0);
      } catch (RuntimeException e) {
        pool.free(blocks);
        throw e;
      }
      finish(p, blocks, KvSource.RECOMPUTED, 0, finishedThisStep);
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
      try {
        compute(l.pending, l.blocks, 0);
      } catch (RuntimeException e) {
        pool.free(l.blocks);
        fail(l.pending, e);
        return;
      }
      finish(l.pending, l.blocks, KvSource.RECOMPUTED, 0, finishedThisStep);
      return;
    }
    pool.free(l.blocks);
    fail(l.pending, new KvLoadFailedException(requestId, reason));
  }

  /** Computes the KV of tokens {@code [from, end)} of the request into its blocks. */
  private void compute(Pending p, List<Integer> blocks, int from) {
    model.computeKv(p.tokens, from, p.tokens.length, (i, kv) -> pool.writeToken(blocks, i, kv));
  }

  private List<Integer> allocate(int count) {
    return pool.tryAllocate(count)
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "engine " + engineId + " checked for " + count + " free blocks but has fewer"));
  }

  private int blocksFor(int tokens) {
    return (tokens + layout.tokensPerBlock() - 1) / layout.tokensPerBlock();
  }

  private void fail(Pending p, Throwable cause) {
    failed.incrementAndGet();
    inFlight.remove(p);
    p.future.completeExceptionally(cause);
  }

  /** A request waiting for blocks. */
  private record Pending(
      EngineRequest request, int[] tokens, CompletableFuture<Generation> future) {}

  /** A request to cancel, and what came of it. */
  private record Cancel(String requestId, String why, CompletableFuture<CancelOutcome> done) {}

  /** A request whose full blocks are being loaded. */
  private record Loading(Pending pending, List<Integer> blocks, int loadedTokens) {}
}
