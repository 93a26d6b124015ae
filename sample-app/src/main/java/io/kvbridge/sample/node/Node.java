package io.kvbridge.sample.node;

import io.kvbridge.sample.SampleProperties;
import io.kvbridge.sample.completions.CompletionFailedException;
import io.kvbridge.sample.completions.CompletionRequest;
import io.kvbridge.sample.completions.CompletionResponse;
import io.kvbridge.sample.completions.InvalidCompletionRequestException;
import io.kvbridge.sample.completions.KvTransferRequest;
import io.kvbridge.sample.engine.Engine;
import io.kvbridge.sample.engine.EngineFactory;
import io.kvbridge.sample.engine.EngineRequest;
import io.kvbridge.sample.engine.EngineShape;
import io.kvbridge.sample.engine.Generation;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.spring.KvConnectors;
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
 * A prefill or decode node: serves OpenAI-style completion requests on an {@link Engine} of its
 * own. Checks the request, turns its {@code kv_transfer_params} into an engine request, waits for
 * the engine, and shapes the answer. A prefill node accepts {@code do_remote_decode} and then keeps
 * the prompt's blocks under a lease for a decode node; a decode node accepts a prefill node's
 * parameters, loads from those blocks what its prefix cache does not hold, and generates. Each
 * refuses the other's with a message that says where to send it.
 *
 * <p>Thread-safe: called by the web server's request threads.
 */
public final class Node implements AutoCloseable {

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
            engine.engineId(),
            generation.kvSource().name(),
            generation.cachedTokens(),
            generation.loadedTokens(),
            generation.computedTokens()));
  }

  /** Stops the engine, which closes its connector and frees its memory. */
  @Override
  public void close() {
    engine.close();
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
