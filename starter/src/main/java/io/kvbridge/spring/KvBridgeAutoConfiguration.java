package io.kvbridge.spring;

import io.kvbridge.runtime.ConnectorRegistry;
import io.kvbridge.time.MonotonicClock;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.core.io.ResourceLoader;

/**
 * Auto-configuration of kvbridge's core: binds {@link KvBridgeProperties} and, for each connector
 * type on the class path, the connector's own properties under {@code kvbridge.<type>.}; discovers
 * the connector providers and offers {@link KvConnectors}, which fails start-up when a setting is
 * invalid or {@code kvbridge.connector.type} names no provider or one that cannot run here.
 *
 * <p>Beans an application may define instead: a {@link ConnectorRegistry} (e.g. over providers it
 * builds itself), a {@link MonotonicClock} (e.g. a {@link io.kvbridge.time.ManualClock} in tests;
 * the system clock otherwise), or {@link KvConnectors} itself. {@link ConnectorObserverFactory},
 * {@link ConnectorTracerFactory} and {@link TransportDecorator} beans add to every connector it
 * creates; a {@link PeerDiscovery} bean (etcd's, when {@code kvbridge.discovery.etcd.endpoints} is
 * set) registers each of them.
 */
@AutoConfiguration
@EnableConfigurationProperties(KvBridgeProperties.class)
public final class KvBridgeAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  ConnectorRegistry kvBridgeConnectorRegistry(ResourceLoader resourceLoader) {
    return ConnectorRegistry.load(resourceLoader.getClassLoader());
  }

  @Bean
  @ConditionalOnMissingBean
  KvConnectors kvConnectors(
      KvBridgeProperties properties,
      ConnectorRegistry registry,
      Environment environment,
      ObjectProvider<MonotonicClock> clock,
      ObjectProvider<PeerDiscovery> discovery,
      ObjectProvider<ConnectorObserverFactory> observerFactories,
      ObjectProvider<ConnectorTracerFactory> tracerFactory,
      ObjectProvider<TransportDecorator> transportDecorators) {
    return new DefaultKvConnectors(
        properties,
        ConnectorPropertyBinding.bind(Binder.get(environment), registry.types()),
        registry,
        clock.getIfAvailable(() -> MonotonicClock.SYSTEM),
        discovery.getIfAvailable(() -> PeerDiscovery.NONE),
        observerFactories,
        tracerFactory,
        transportDecorators);
  }
}
