package io.kvbridge.sample.decode;

import io.kvbridge.sample.completions.EngineEndpoint;
import io.kvbridge.sample.engine.Engine;

/**
 * The decode node (D): loads each prompt's full blocks from the prefill node named in the request's
 * {@code kv_transfer_params}, computes the partial tail itself, and generates the completion.
 *
 * @param endpoint its completions endpoint
 */
public record DecodeNode(EngineEndpoint endpoint) implements AutoCloseable {

  /** The path prefix of the completions API when none is configured. */
  public static final String DEFAULT_PATH = "/decode";

  /** The engine id when none is configured. */
  public static final String DEFAULT_ENGINE_ID = "decode-0";

  /** The node's engine. */
  public Engine engine() {
    return endpoint.engine();
  }

  /** Stops the engine, which closes its connector and frees its memory. */
  @Override
  public void close() {
    engine().close();
  }
}
