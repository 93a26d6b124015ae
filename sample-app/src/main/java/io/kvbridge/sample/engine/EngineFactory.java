package io.kvbridge.sample.engine;

import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.LoadFailurePolicy;
import java.time.Duration;

/**
 * Creates started engines that share a load-failure policy, step interval and context; each engine
 * gets its own connector and its own {@link EngineShape}.
 *
 * @param policy what an engine does when a load fails
 * @param stepInterval how long an idle engine waits between steps
 * @param context how many tokens a request's prompt and completion may hold together
 * @param prefillCost what computing one layer of one prompt token costs an engine
 */
public record EngineFactory(
    LoadFailurePolicy policy, Duration stepInterval, ContextWindow context, Duration prefillCost) {

  /** Checks the prefill cost. */
  public EngineFactory {
    if (prefillCost.isNegative()) {
      throw new IllegalArgumentException("prefill cost must be 0 or more, got " + prefillCost);
    }
  }

  /** A factory whose engines compute in no time. */
  public EngineFactory(LoadFailurePolicy policy, Duration stepInterval, ContextWindow context) {
    this(policy, stepInterval, context, Duration.ZERO);
  }

  /** A factory whose engines have a context of {@value ContextWindow#DEFAULT_TOKENS} tokens. */
  public EngineFactory(LoadFailurePolicy policy, Duration stepInterval) {
    this(policy, stepInterval, new ContextWindow(ContextWindow.DEFAULT_TOKENS));
  }

  /**
   * Starts an engine of {@code shape} on {@code connector}, which must have as many ranks. If
   * start-up fails, the connector is closed and the failure rethrown.
   */
  public Engine start(KvConnector connector, EngineShape shape) {
    Engine engine;
    try {
      engine = new Engine(connector, shape, policy, stepInterval, context, prefillCost);
    } catch (RuntimeException e) {
      connector.close();
      throw e;
    }
    try {
      engine.start();
    } catch (RuntimeException e) {
      engine.close();
      throw e;
    }
    return engine;
  }
}
