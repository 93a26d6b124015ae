package io.kvbridge.spring.actuate;

import io.kvbridge.discovery.etcd.EtcdDiscovery;
import io.kvbridge.spring.discovery.EtcdDiscoveryAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the etcd discovery health indicator ({@code kvbridgeEtcd}), when discovery
 * on etcd runs, Spring Boot's health support is on the class path and {@code
 * management.health.kvbridge-etcd.enabled} is not false.
 */
@AutoConfiguration(
    after = EtcdDiscoveryAutoConfiguration.class,
    beforeName =
        "org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration")
@ConditionalOnClass({Health.class, EtcdDiscovery.class})
@ConditionalOnBean(EtcdDiscovery.class)
@ConditionalOnEnabledHealthIndicator("kvbridge-etcd")
public final class EtcdDiscoveryHealthContributorAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean(name = "kvbridgeEtcdHealthIndicator")
  EtcdDiscoveryHealthIndicator kvbridgeEtcdHealthIndicator(EtcdDiscovery discovery) {
    return new EtcdDiscoveryHealthIndicator(discovery);
  }
}
