package io.kvbridge.sample.engine;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.LoadFailurePolicy;
import java.time.Duration;

/**
 * Creates started engines that share one KV layout, load-failure policy, step interval and context;
 * each engine gets its own connector.
 *
 * @param layout the KV cache every engine allocates
 * @param policy what an engine does when a load fails
 * @param stepInterval how long an idle engine waits between steps
 * @param context how many tokens a request's prompt and completion may hold together
 */
public record EngineFactory(
    KvLayout layout, LoadFailurePolicy policy, Duration stepInterval, ContextWindow context) {

  /** A factory whose engines have a context of {@value ContextWindow#DEFAULT_TOKENS} tokens. */
  public EngineFactory(KvLayout layout, LoadFailurePolicy policy, Duration stepInterval) {
    this(layout, policy, stepInterval, new ContextWindow(ContextWindow.DEFAULT_TOKENS));
  }

  /**
   * Starts an engine on {@code connector}. If start-up fails, the connector is closed and the
   * failure rethrown.
   */
  public Engine start(KvConnector connector) {
    Engine engine = new Engine(connector, layout, policy, stepInterval, context);
    try {
      engine.start();
    } catch (RuntimeException e) {
      engine.close();
      throw e;
    }
    return engine;
  }
}
