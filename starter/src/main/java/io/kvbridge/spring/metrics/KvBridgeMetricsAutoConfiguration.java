package io.kvbridge.spring.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of kvbridge's Micrometer metrics: when the application has a {@link
 * MeterRegistry}, every connector's events are recorded in it.
 */
@AutoConfiguration(
    afterName = {
      "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
      "org.springframework.boot.micrometer.metrics.autoconfigure"
          + ".CompositeMeterRegistryAutoConfiguration"
    })
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean(MeterRegistry.class)
public final class KvBridgeMetricsAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  MicrometerConnectorObservers kvBridgeMicrometerObservers(MeterRegistry registry) {
    return new MicrometerConnectorObservers(registry);
  }
}
