package io.kvbridge.sample.engine;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * One engine's health: UP while its step loop runs; DOWN with the reason once the loop has died
 * (every request to the engine then fails at once); OUT_OF_SERVICE once the engine is closed.
 *
 * <p>Thread-safe: reads only {@link Engine#state()}.
 */
public class EngineHealthIndicator implements HealthIndicator {

  private final Engine engine;

  /** Reports on {@code engine}. */
  public EngineHealthIndicator(Engine engine) {
    this.engine = engine;
  }

  @Override
  public Health health() {
    EngineState state = engine.state();
    Health.Builder health;
    if (state instanceof EngineState.Running) {
      health = Health.up();
    } else if (state instanceof EngineState.Failed failed) {
      health = Health.down().withDetail("reason", failed.reason());
    } else if (state instanceof EngineState.Closed) {
      health = Health.outOfService().withDetail("reason", "the engine is shut down");
    } else {
      health = Health.unknown().withDetail("reason", "the engine has not started");
    }
    return health.withDetail("engineId", engine.engineId()).build();
  }
}
