package io.kvbridge.sample.prefill;

import io.kvbridge.sample.SampleProperties;
import io.kvbridge.sample.completions.EngineEndpoint;
import io.kvbridge.sample.engine.EngineFactory;
import io.kvbridge.sample.engine.EngineHealthIndicator;
import io.kvbridge.spi.Role;
import io.kvbridge.spring.KvConnectors;
import java.util.Objects;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Runs a prefill node in this JVM unless {@code kvbridge.sample.prefill.enabled=false}. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty(name = "kvbridge.sample.prefill.enabled", matchIfMissing = true)
public class PrefillNodeConfiguration {

  /** The prefill engine, on a producer connector of its own. */
  @Bean(destroyMethod = "close")
  public PrefillNode prefillNode(
      KvConnectors connectors, EngineFactory engines, SampleProperties properties) {
    String engineId =
        Objects.requireNonNullElse(properties.prefill().engineId(), PrefillNode.DEFAULT_ENGINE_ID);
    return new PrefillNode(
        new EngineEndpoint(
            engines.start(connectors.create(engineId, Role.PRODUCER)),
            EngineEndpoint.NodeKind.PREFILL,
            properties.requestTimeout()));
  }

  /**
   * The prefill engine's health, {@code prefillEngine}: DOWN with the reason once its step loop has
   * died.
   */
  @Bean
  public EngineHealthIndicator prefillEngineHealthIndicator(PrefillNode node) {
    return new EngineHealthIndicator(node.engine());
  }
}
