package io.kvbridge.spring.actuate;

import io.kvbridge.spring.KvBridgeAutoConfiguration;
import io.kvbridge.spring.KvConnectors;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of kvbridge's health ({@code kvbridge}, one member per engine), when Spring
 * Boot's health support is on the class path and {@code management.health.kvbridge.enabled} is not
 * false. An application bean named {@code kvbridgeHealthContributor} (or {@code
 * kvbridgeHealthIndicator}) replaces it.
 */
@AutoConfiguration(
    after = KvBridgeAutoConfiguration.class,
    beforeName =
        "org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration")
@ConditionalOnClass(Health.class)
@ConditionalOnBean(KvConnectors.class)
@ConditionalOnEnabledHealthIndicator("kvbridge")
public final class KvBridgeHealthContributorAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean(name = {"kvbridgeHealthContributor", "kvbridgeHealthIndicator"})
  KvBridgeHealthContributor kvbridgeHealthContributor(KvConnectors connectors) {
    return new KvBridgeHealthContributor(connectors);
  }
}
