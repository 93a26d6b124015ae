package io.kvbridge.sample.engine;

import io.kvbridge.events.BlockHashes;
import io.kvbridge.events.KvEventLog;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.LoadFailurePolicy;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.spi.WorkerSide;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.KvRegions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
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
 * <p>Jobs: this class is the engine's life (start, the step loop, failure, close) and its API;
 * {@link StepScheduler} is what one step does, with the tables of the requests held between steps,
 * and {@link EngineBlocks} the blocks and the KV computed into them.
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
  private final Duration prefillCost;
  private final LinkedBlockingQueue<PendingRequest> inbox = new LinkedBlockingQueue<>();
  private final ConcurrentLinkedQueue<CancelRequest> cancels = new ConcurrentLinkedQueue<>();

  private final EngineCounters counters = new EngineCounters();

  /** How many of its latest batches of KV events an engine keeps for readers that resume. */
  public static final int RETAINED_EVENT_BATCHES = 4096;

  // What the prefix cache stores and evicts, for routers ("KV events", docs/events.md).
  private final KvEventLog events;

  private final Object lifecycle = new Object();
  // Each rank's KV memory, as allocated; freed on close.
  private final List<KvRegions> memories = new ArrayList<>();
  private BlockPool pool;
  // Set once by start(); used on the engine thread only, but for its size, which stats() reads.
  private volatile PrefixCache cache;
  // Set once by start(); the engine thread's.
  private StepScheduler scheduler;
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
      ContextWindow context,
      Duration prefillCost) {
    this.connector = Objects.requireNonNull(connector, "connector");
    this.prefillCost = Objects.requireNonNull(prefillCost, "prefillCost");
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
    this.events =
        new KvEventLog(
            engineId,
            connector.settings().incarnation(),
            shape.model().model(),
            shape.tokensPerBlock(),
            RETAINED_EVENT_BATCHES);
  }

  /**
   * Allocates each rank's share of the KV cache through the connector ({@code
   * worker(rank).allocateKvRegions}), registers it ({@code registerKvCache}) and starts the step
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
        List<KvMemory> regions = worker.allocateKvRegions(layout);
        memories.add(new KvRegions(layout, regions));
        worker.registerKvCache(regions, layout);
        ranks.add(layout);
      }
      pool = new BlockPool(memories);
      cache =
          new PrefixCache(
              pool,
              shape.prefixCacheBlocks(),
              new BlockHashes(shape.model().model(), shape.tokensPerBlock()),
              events);
      scheduler =
          new StepScheduler(
              connector, shape, model, policy, pool, cache, counters, inbox, cancels, prefillCost);
      running = true;
      thread = new Thread(this::run, "engine-" + engineId);
      thread.setDaemon(true);
      thread.start();
      LOG.info(
          "engine {} started: TP {}, {} blocks of {} tokens ({} bytes per rank, {}, {} in {}"
              + " region(s)) in {} memory,"
              + " prefix cache of up to {} blocks, load-failure policy {}",
          engineId,
          shape.tpDegree(),
          shape.blockCount(),
          shape.tokensPerBlock(),
          ranks.get(0).blockBytes(),
          shape.model().order().name().toLowerCase(Locale.ROOT).replace('_', '-'),
          shape.model().placement().name().toLowerCase(Locale.ROOT).replace('_', '-'),
          ranks.get(0).regions(),
          memories.get(0).kind(),
          shape.prefixCacheBlocks(),
          policy);
    }
  }

  /**
   * What this engine's prefix cache holds and how it changes: a snapshot, and a batch of KV events
   * closed at each step that changed it ({@code docs/events.md}).
   */
  public KvEventLog kvEvents() {
    return events;
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
    return submit(request, Optional.empty());
  }

  /**
   * {@link #submit(EngineRequest)} of a request a decode node will read, whose caller forwards the
   * transfer parameters as soon as the lease is granted: the engine asks the connector for a lease
   * as the prefill starts ({@code requestStarted}) and, when the connector streams it (at least
   * {@code kvbridge.streaming.min-tokens} tokens), tells {@code onLeased} the parameters on the
   * engine thread, then reports each layer saved as it computes it. The future still completes once
   * the prefill is done. A request not streamed is leased when it finishes, and {@code onLeased} is
   * not called.
   */
  public CompletableFuture<Generation> submit(
      EngineRequest request, Consumer<TransferParams> onLeased) {
    return submit(request, Optional.of(onLeased));
  }

  private CompletableFuture<Generation> submit(
      EngineRequest request, Optional<Consumer<TransferParams>> onLeased) {
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
    int needed = (tokens.length + shape.tokensPerBlock() - 1) / shape.tokensPerBlock();
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
    PendingRequest pending = new PendingRequest(request, tokens, future, onLeased);
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
    CancelRequest cancel = new CancelRequest(requestId, why, new CompletableFuture<>());
    if (!running) {
      // A stopped engine already failed every request and its connector revoked every lease.
      cancel.done().complete(CancelOutcome.NOT_FOUND);
      return cancel.done();
    }
    cancels.add(cancel);
    if (!running && cancels.remove(cancel)) {
      cancel.done().complete(CancelOutcome.NOT_FOUND);
    }
    return cancel.done();
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
        counters.heldForTransferCount,
        counters.waitingCount + inbox.size(),
        counters.loadingCount,
        counters.completed.get(),
        counters.failed.get(),
        counters.loadedBlocks.get(),
        counters.loadedTokens.get(),
        counters.cachedTokens.get(),
        counters.computedTokens.get(),
        counters.recomputed.get(),
        counters.steps.get(),
        counters.streamed.get());
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
      memories.forEach(m -> m.regions().forEach(KvMemory::close));
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
          PendingRequest next = inbox.poll(stepInterval.toNanos(), TimeUnit.NANOSECONDS);
          if (next != null) {
            scheduler.accept(next);
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
    for (PendingRequest p = inbox.poll(); p != null; p = inbox.poll()) {
      if (scheduler != null) {
        scheduler.fail(p, stopped());
      } else {
        p.future.completeExceptionally(stopped());
      }
    }
    for (CancelRequest c = cancels.poll(); c != null; c = cancels.poll()) {
      c.done().complete(CancelOutcome.NOT_FOUND);
    }
    if (scheduler != null) {
      scheduler.failAll(stopped());
    }
  }

  /** Why a request cannot be served now that the loop has stopped. */
  private RuntimeException stopped() {
    Throwable dead = failure;
    return dead != null
        ? new EngineFailedException(engineId, dead)
        : new EngineClosedException(engineId);
  }

  /** One engine step; runs on the engine thread. */
  private void step() {
    // Counted as it begins: a request answered by this step sees it counted.
    counters.steps.incrementAndGet();
    Runnable fault = nextStepFault.getAndSet(null);
    if (fault != null) {
      fault.run();
    }
    scheduler.step();
  }
}
