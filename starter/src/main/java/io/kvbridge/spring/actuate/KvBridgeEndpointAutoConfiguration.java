package io.kvbridge.spring.actuate;

import io.kvbridge.spring.KvBridgeAutoConfiguration;
import io.kvbridge.spring.KvConnectors;
import io.kvbridge.spring.events.PrefixIndexView;
import org.springframework.beans.factory.ObjectProvider;
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
 * management.endpoints.web.exposure.include=health,kvbridge}). The endpoint includes the
 * application's prefix index when it declares a {@link PrefixIndexView} (one, or one marked
 * primary).
 */
@AutoConfiguration(after = KvBridgeAutoConfiguration.class)
@ConditionalOnClass({Endpoint.class, ConditionalOnAvailableEndpoint.class})
@ConditionalOnBean(KvConnectors.class)
@ConditionalOnAvailableEndpoint(KvBridgeEndpoint.class)
public final class KvBridgeEndpointAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  KvBridgeEndpoint kvBridgeEndpoint(
      KvConnectors connectors, ObjectProvider<PrefixIndexView> prefixIndex) {
    PrefixIndexView view = prefixIndex.getIfAvailable();
    return view == null ? new KvBridgeEndpoint(connectors) : new KvBridgeEndpoint(connectors, view);
  }
}
