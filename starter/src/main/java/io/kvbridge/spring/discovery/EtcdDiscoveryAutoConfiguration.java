package io.kvbridge.spring.discovery;

import io.kvbridge.discovery.etcd.EngineAttributes;
import io.kvbridge.discovery.etcd.EngineLoad;
import io.kvbridge.discovery.etcd.EtcdDiscovery;
import io.kvbridge.spring.InvalidKvBridgePropertyException;
import io.kvbridge.spring.KvBridgeAutoConfiguration;
import io.kvbridge.spring.PeerDiscovery;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration of discovery on etcd, when {@code kvbridge.discovery.etcd.endpoints} is set:
 * starts an {@link EtcdDiscovery} (which keeps trying while etcd is unreachable, so an engine may
 * start before etcd does) and offers it as the {@link PeerDiscovery} every connector of {@link
 * io.kvbridge.spring.KvConnectors} registers with and finds producers through. An {@link
 * EngineLoad} bean tells each registration how many blocks its engine has free, an {@link
 * EngineAttributes} bean what else it publishes (e.g. where the engine's HTTP API is).
 *
 * <p>With the property set and the {@code discovery-etcd} module missing from the class path,
 * start-up fails saying so: a deployment that asks for etcd never runs without it unnoticed.
 */
@AutoConfiguration(before = KvBridgeAutoConfiguration.class)
@Conditional(OnEtcdEndpointsCondition.class)
public final class EtcdDiscoveryAutoConfiguration {

  /** Discovery on etcd, with the module on the class path. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(EtcdDiscovery.class)
  @EnableConfigurationProperties(EtcdDiscoveryProperties.class)
  static class OnEtcd {

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    EtcdDiscovery kvBridgeEtcdDiscovery(EtcdDiscoveryProperties properties) {
      return EtcdDiscovery.start(properties.settings());
    }

    @Bean
    @ConditionalOnMissingBean
    PeerDiscovery kvBridgePeerDiscovery(
        EtcdDiscovery discovery,
        ObjectProvider<EngineLoad> load,
        ObjectProvider<EngineAttributes> attributes) {
      return new EtcdPeerDiscovery(
          discovery,
          load.getIfAvailable(() -> EngineLoad.UNKNOWN),
          attributes.getIfAvailable(() -> EngineAttributes.NONE));
    }
  }

  /** The property is set, but the module is not on the class path. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnMissingClass("io.kvbridge.discovery.etcd.EtcdDiscovery")
  static class WithoutTheModule {

    @Bean
    PeerDiscovery kvBridgePeerDiscovery() {
      throw new InvalidKvBridgePropertyException(
          OnEtcdEndpointsCondition.PROPERTY,
          OnEtcdEndpointsCondition.PROPERTY
              + " is set, but discovery on etcd is not on the class path: add the dependency"
              + " io.kvbridge:discovery-etcd to the application, or unset the property");
    }
  }
}
