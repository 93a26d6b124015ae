package io.kvbridge.sample.engine;

import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.KvLayout;
import io.kvbridge.spi.LoadFailurePolicy;
import java.time.Duration;

/**
 * Creates started engines that share one KV layout, load-failure policy and step interval; each
 * engine gets its own connector.
 *
 * @param layout the KV cache every engine allocates
 * @param policy what an engine does when a load fails
 * @param stepInterval how long an idle engine waits between steps
 */
public record EngineFactory(KvLayout layout, LoadFailurePolicy policy, Duration stepInterval) {

  /**
   * Starts an engine on {@code connector}. If start-up fails, the connector is closed and the
   * failure rethrown.
   */
  public Engine start(KvConnector connector) {
    Engine engine = new Engine(connector, layout, policy, stepInterval);
    try {
      engine.start();
    } catch (RuntimeException e) {
      engine.close();
      throw e;
    }
    return engine;
  }
}
