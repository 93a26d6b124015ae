package io.kvbridge.sample.node;

import io.kvbridge.sample.SampleProperties;
import io.kvbridge.sample.completions.CompletionFailedException;
import io.kvbridge.sample.completions.CompletionRequest;
import io.kvbridge.sample.completions.CompletionResponse;
import io.kvbridge.sample.completions.InvalidCompletionRequestException;
import io.kvbridge.sample.completions.KvTransferRequest;
import io.kvbridge.sample.completions.RevokeRequest;
import io.kvbridge.sample.completions.RevokeResponse;
import io.kvbridge.sample.engine.CancelOutcome;
import io.kvbridge.sample.engine.Engine;
import io.kvbridge.sample.engine.EngineFactory;
import io.kvbridge.sample.engine.EngineRequest;
import io.kvbridge.sample.engine.EngineShape;
import io.kvbridge.sample.engine.Generation;
import io.kvbridge.sample.engine.RequestCancelledException;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.spring.KvConnectors;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A prefill or decode node: serves OpenAI-style completion requests on an {@link Engine} of its
 * own. Checks the request, turns its {@code kv_transfer_params} into an engine request, waits for
 * the engine, and shapes the answer. A prefill node accepts {@code do_remote_decode} and then keeps
 * the prompt's blocks under a lease for a decode node; a decode node accepts a prefill node's
 * parameters, loads from those blocks what its prefix cache does not hold, and generates. Each
 * refuses the other's with a message that says where to send it.
 *
 * <p>A request may be cancelled while it runs (its client went away, or it took longer than the
 * request timeout): see {@link Engine#cancel}. A prefill node also revokes, on request, the lease
 * of a finished request whose parameters will never reach a decode node.
 *
 * <p>Thread-safe: called by the web server's request threads.
 */
public final class Node implements AutoCloseable {

  /**
   * The {@code kv.source} of a prefill node's answer given as its lease was granted, before the
   * prefill finished: the decode node reads each layer while the next ones compute.
   */
  public static final String STREAMED = "STREAMED";

  private static final Logger LOG = LoggerFactory.getLogger(Node.class);

  /** How long a timed-out request's cancel may take before the engine counts as stuck. */
  static final Duration CANCEL_WAIT = Duration.ofSeconds(1);

  private final NodeKind kind;
  private final Engine engine;
  private final Duration timeout;

  /** A node of {@code kind} on {@code engine}, waiting at most {@code timeout} for each request. */
  public Node(NodeKind kind, Engine engine, Duration timeout) {
    this.kind = kind;
    this.engine = engine;
    this.timeout = timeout;
  }

  /**
   * Starts a node of {@code kind} as configured: its engine, of the kind's shape, on a connector of
   * its own with a rank per tensor-parallel rank, for the kind's engine id and role.
   */
  public static Node start(
      NodeKind kind, KvConnectors connectors, EngineFactory engines, SampleProperties properties) {
    EngineShape shape = kind.engineShape(properties);
    Engine engine =
        engines.start(
            connectors.create(kind.engineId(properties), kind.role(), shape.tpDegree()), shape);
    return new Node(kind, engine, properties.requestTimeout());
  }

  /** Which kind of node this is. */
  public NodeKind kind() {
    return kind;
  }

  /** The node's engine. */
  public Engine engine() {
    return engine;
  }

  /**
   * Starts one completion on the engine.
   *
   * @return the request's id on the engine, and its answer: a completion, or a failure with {@link
   *     CompletionFailedException} 504 when the engine did not finish within the request timeout
   *     (the request is then cancelled; {@link KvLoadTimedOutException} if its KV was still being
   *     loaded from the prefill node), with {@link
   *     io.kvbridge.sample.engine.InvalidPromptException} if the prompt does not fit the pool, with
   *     {@link io.kvbridge.spi.InvalidTransferParamsException} if the connector refuses the
   *     transfer parameters, or with the engine's own failure, e.g. {@link
   *     io.kvbridge.sample.engine.KvLoadFailedException}, {@link
   *     io.kvbridge.sample.engine.EngineFailedException} or {@link RequestCancelledException}
   * @throws InvalidCompletionRequestException if the request is malformed
   * @throws io.kvbridge.sample.engine.InvalidPromptException if it does not fit the model's context
   * @throws io.kvbridge.spi.InvalidTransferParamsException if {@code kv_transfer_params} is
   */
  public Running submit(CompletionRequest request) {
    request.validate(engine.context());
    KvTransferRequest transfer = KvTransferRequest.parse(request.kvTransferParams());
    boolean remoteDecode = false;
    Optional<TransferParams> params = Optional.empty();
    if (transfer instanceof KvTransferRequest.RemoteDecode) {
      if (kind != NodeKind.PREFILL) {
        throw new InvalidCompletionRequestException(
            "kv_transfer_params",
            "do_remote_decode is for prefill nodes; this is decode node "
                + engine.engineId()
                + ", send it the parameters a prefill node returned");
      }
      remoteDecode = true;
    } else if (transfer instanceof KvTransferRequest.Load load) {
      if (kind != NodeKind.DECODE) {
        throw new InvalidCompletionRequestException(
            "kv_transfer_params",
            "this is prefill node "
                + engine.engineId()
                + "; send a prefill node's kv_transfer_params to a decode node");
      }
      params = Optional.of(load.params());
    }
    String id = "cmpl-" + UUID.randomUUID().toString().replace("-", "");
    EngineRequest engineRequest =
        new EngineRequest(id, request.prompt(), request.maxTokensOrDefault(), remoteDecode, params);
    Optional<String> producer = params.map(TransferParams::producerEngineId);
    CompletableFuture<TransferParams> leased = new CompletableFuture<>();
    CompletableFuture<Generation> generated =
        remoteDecode
            ? engine.submit(engineRequest, leased::complete)
            : engine.submit(engineRequest);
    CompletableFuture<CompletionResponse> done =
        generated
            .copy()
            .orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS)
            .handle(
                (generation, failure) ->
                    failure == null
                        ? CompletableFuture.completedFuture(answer(request, id, generation))
                        : failed(id, producer, failure))
            .thenCompose(Function.identity());
    CompletableFuture<CompletionResponse> answer = done;
    if (remoteDecode) {
      // A streamed lease: the router gets the parameters as the prefill starts, and the decode node
      // reads each layer while the next ones compute; what the prefill then produces is not used.
      CompletableFuture<CompletionResponse> early =
          leased.thenApply(p -> streamedAnswer(request, id, p));
      generated.whenComplete(
          (generation, failure) -> {
            if (failure != null && leased.isDone()) {
              LOG.warn("streamed prefill of {} failed after its lease was granted", id, failure);
            }
          });
      answer = CompletableFuture.anyOf(early, done).thenCompose(first -> firstDone(early, done));
    }
    return new Running(id, answer);
  }

  /** {@code early} if it completed, else {@code late}: the answer of whichever came first. */
  private static CompletableFuture<CompletionResponse> firstDone(
      CompletableFuture<CompletionResponse> early, CompletableFuture<CompletionResponse> late) {
    return early.isDone() && !early.isCompletedExceptionally() ? early : late;
  }

  /**
   * The answer to a prefill whose lease was granted as it started: the transfer parameters, no
   * completion text yet (the decode node generates it), every prompt token computed here.
   */
  private CompletionResponse streamedAnswer(
      CompletionRequest request, String id, TransferParams params) {
    return new CompletionResponse(
        id,
        "text_completion",
        Instant.now().getEpochSecond(),
        request.model(),
        List.of(new CompletionResponse.Choice(0, "", "length")),
        new CompletionResponse.Usage(params.tokens(), 0, params.tokens()),
        params.toMap(),
        new CompletionResponse.KvInfo(engine.engineId(), STREAMED, 0, 0, params.tokens()));
  }

  /**
   * Cancels request {@code requestId} wherever it is on the engine ({@link Engine#cancel}); its
   * answer fails with {@link RequestCancelledException}.
   */
  public CompletableFuture<CancelOutcome> cancel(String requestId, String why) {
    return engine.cancel(requestId, why);
  }

  /**
   * Revokes the lease of a finished request at once, e.g. because its parameters will never reach a
   * decode node: the blocks come back at the engine's next step. Prefill nodes only.
   *
   * @throws InvalidCompletionRequestException if the request is malformed
   */
  public CompletableFuture<RevokeResponse> revoke(RevokeRequest request) {
    if (kind != NodeKind.PREFILL) {
      throw new IllegalStateException("only a prefill node holds leases; this is " + kind.id());
    }
    request.validate();
    String id = request.requestId();
    return engine
        .cancel(id, request.reasonOrDefault())
        .thenApply(outcome -> new RevokeResponse(id, outcome == CancelOutcome.LEASE_REVOKED));
  }

  /** Stops the engine, which closes its connector and frees its memory. */
  @Override
  public void close() {
    engine.close();
  }

  private CompletionResponse answer(CompletionRequest request, String id, Generation generation) {
    Map<String, Object> returnedParams =
        generation.transferParams().map(TransferParams::toMap).orElse(null);
    return new CompletionResponse(
        id,
        "text_completion",
        Instant.now().getEpochSecond(),
        request.model(),
        List.of(new CompletionResponse.Choice(0, generation.text(), "length")),
        new CompletionResponse.Usage(
            generation.promptTokens(),
            generation.words().size(),
            generation.promptTokens() + generation.words().size()),
        returnedParams,
        new CompletionResponse.KvInfo(
            engine.engineId(),
            generation.kvSource().name(),
            generation.cachedTokens(),
            generation.loadedTokens(),
            generation.computedTokens()));
  }

  private CompletableFuture<CompletionResponse> failed(
      String id, Optional<String> producer, Throwable failure) {
    Throwable cause = failure instanceof CompletionException ? failure.getCause() : failure;
    if (cause instanceof TimeoutException) {
      return timedOut(id, producer, cause)
          .thenCompose(CompletableFuture::<CompletionResponse>failedFuture);
    }
    if (cause instanceof RuntimeException runtime) {
      return CompletableFuture.failedFuture(runtime);
    }
    return CompletableFuture.failedFuture(
        new IllegalStateException("engine " + engine.engineId() + " failed " + id, cause));
  }

  /**
   * Cancels a request not finished within the timeout and says whose fault that was: a request
   * whose KV was still being loaded (or whose lease was still being confirmed) waited for the
   * prefill node, {@link KvLoadTimedOutException}; anything else, or an engine that does not take
   * the cancel within {@link #CANCEL_WAIT}, is this engine's own 504 {@code timeout}.
   */
  private CompletableFuture<CompletionFailedException> timedOut(
      String id, Optional<String> producer, Throwable cause) {
    String limit = timeout.toMillis() + " ms (kvbridge.sample.request-timeout)";
    String notFinished =
        "engine " + engine.engineId() + " did not finish " + id + " within " + limit;
    // Nobody waits for it any more: its blocks, and a lease nobody will read, come back now.
    return engine
        .cancel(id, "not finished within " + limit)
        .copy()
        .completeOnTimeout(CancelOutcome.NOT_FOUND, CANCEL_WAIT.toNanos(), TimeUnit.NANOSECONDS)
        .exceptionally(failure -> CancelOutcome.NOT_FOUND)
        .thenApply(
            outcome -> {
              if (outcome == CancelOutcome.LOAD_CANCELLED && producer.isPresent()) {
                return new KvLoadTimedOutException(
                    notFinished
                        + ": its KV cache was still being loaded from prefill node "
                        + producer.get()
                        + ", which did not finish the transfer; the load was cancelled",
                    cause);
              }
              return new CompletionFailedException(504, "timeout", notFinished, cause);
            });
  }

  /**
   * A completion started on the engine.
   *
   * @param requestId its id on the engine
   * @param answer completes with the answer, or fails as {@link #submit} says
   */
  public record Running(String requestId, CompletableFuture<CompletionResponse> answer) {}
}
