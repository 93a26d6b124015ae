package io.kvbridge.sample.completions;

import io.kvbridge.sample.engine.Engine;
import io.kvbridge.sample.engine.EngineRequest;
import io.kvbridge.sample.engine.Generation;
import io.kvbridge.spi.TransferParams;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Serves OpenAI-style completion requests on one {@link Engine}: checks the request, turns its
 * {@code kv_transfer_params} into an engine request, waits for the engine, and shapes the answer. A
 * prefill node's endpoint accepts {@code do_remote_decode}; a decode node's accepts a prefill
 * node's parameters; each refuses the other's with a message that says where to send it.
 *
 * <p>Thread-safe: called by the web server's request threads.
 */
public final class EngineEndpoint {

  /** Which kind of node this endpoint serves. */
  public enum NodeKind {
    /** Computes prompts and holds their KV for decode nodes. */
    PREFILL,
    /** Loads prompts' KV from prefill nodes and generates. */
    DECODE
  }

  private final Engine engine;
  private final NodeKind kind;
  private final Duration timeout;

  /** An endpoint for {@code engine}, waiting at most {@code timeout} for each request. */
  public EngineEndpoint(Engine engine, NodeKind kind, Duration timeout) {
    this.engine = engine;
    this.kind = kind;
    this.timeout = timeout;
  }

  /** The engine behind this endpoint. */
  public Engine engine() {
    return engine;
  }

  /**
   * Runs one completion.
   *
   * @throws InvalidCompletionRequestException if the request is malformed
   * @throws io.kvbridge.sample.engine.InvalidPromptException if it does not fit the model's context
   * @throws io.kvbridge.spi.InvalidTransferParamsException if {@code kv_transfer_params} is
   * @throws CompletionFailedException with 504 when the engine does not answer in time
   * @throws RuntimeException the engine's own failure, e.g. {@link
   *     io.kvbridge.sample.engine.KvLoadFailedException} or {@link
   *     io.kvbridge.sample.engine.EngineFailedException}
   */
  public CompletionResponse complete(CompletionRequest request) {
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
    Generation generation = await(engine.submit(engineRequest), id);
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
            engine.engineId(), generation.kvSource().name(), generation.loadedTokens()));
  }

  private Generation await(Future<Generation> future, String id) {
    try {
      return future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException runtime) {
        throw runtime;
      }
      throw new IllegalStateException("engine " + engine.engineId() + " failed " + id, e);
    } catch (TimeoutException e) {
      throw new CompletionFailedException(
          504,
          "timeout",
          "engine "
              + engine.engineId()
              + " did not finish "
              + id
              + " within "
              + timeout.toMillis()
              + " ms (kvbridge.sample.request-timeout)",
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CompletionFailedException(503, "interrupted", "interrupted while waiting", e);
    }
  }
}
