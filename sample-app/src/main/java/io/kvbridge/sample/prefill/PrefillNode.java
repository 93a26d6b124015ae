package io.kvbridge.sample.prefill;

import io.kvbridge.sample.completions.EngineEndpoint;
import io.kvbridge.sample.engine.Engine;

/**
 * The prefill node (P): computes each prompt, returns the first token, and, when the router asks
 * for remote decode, keeps the prompt's blocks under a lease for the decode node.
 *
 * @param endpoint its completions endpoint
 */
public record PrefillNode(EngineEndpoint endpoint) implements AutoCloseable {

  /** The path prefix of the completions API when none is configured. */
  public static final String DEFAULT_PATH = "/prefill";

  /** The engine id when none is configured. */
  public static final String DEFAULT_ENGINE_ID = "prefill-0";

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
