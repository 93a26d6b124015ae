package io.kvbridge.spring.actuate;

import io.kvbridge.spring.KvBridgeAutoConfiguration;
import io.kvbridge.spring.KvConnectors;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the {@code kvbridge} management endpoint, when Actuator is on the class
 * path and the endpoint is enabled and exposed (e.g. {@code
 * management.endpoints.web.exposure.include=health,kvbridge}).
 */
@AutoConfiguration(after = KvBridgeAutoConfiguration.class)
@ConditionalOnClass({Endpoint.class, ConditionalOnAvailableEndpoint.class})
@ConditionalOnBean(KvConnectors.class)
@ConditionalOnAvailableEndpoint(KvBridgeEndpoint.class)
public final class KvBridgeEndpointAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  KvBridgeEndpoint kvBridgeEndpoint(KvConnectors connectors) {
    return new KvBridgeEndpoint(connectors);
  }
}
