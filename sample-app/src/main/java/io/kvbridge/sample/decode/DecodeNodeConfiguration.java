package io.kvbridge.sample.decode;

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

/** Runs a decode node in this JVM unless {@code kvbridge.sample.decode.enabled=false}. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty(name = "kvbridge.sample.decode.enabled", matchIfMissing = true)
public class DecodeNodeConfiguration {

  /** The decode engine, on a consumer connector of its own. */
  @Bean(destroyMethod = "close")
  public DecodeNode decodeNode(
      KvConnectors connectors, EngineFactory engines, SampleProperties properties) {
    String engineId =
        Objects.requireNonNullElse(properties.decode().engineId(), DecodeNode.DEFAULT_ENGINE_ID);
    return new DecodeNode(
        new EngineEndpoint(
            engines.start(connectors.create(engineId, Role.CONSUMER)),
            EngineEndpoint.NodeKind.DECODE,
            properties.requestTimeout()));
  }

  /**
   * The decode engine's health, {@code decodeEngine}: DOWN with the reason once its step loop has
   * died.
   */
  @Bean
  public EngineHealthIndicator decodeEngineHealthIndicator(DecodeNode node) {
    return new EngineHealthIndicator(node.engine());
  }
}
