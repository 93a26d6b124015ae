package io.kvbridge.spring.scheduling;

import io.kvbridge.spring.KvBridgeAutoConfiguration;
import io.kvbridge.spring.KvBridgeProperties;
import io.kvbridge.spring.KvConnectors;
import java.time.Duration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration;
import org.springframework.boot.task.ThreadPoolTaskSchedulerBuilder;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of kvbridge's timers: scheduled sweeps and heartbeats for every connector of
 * {@link KvConnectors}, on a scheduler of kvbridge's own (built with Boot's {@link
 * ThreadPoolTaskSchedulerBuilder} when there is one), so the application need not enable
 * scheduling.
 */
@AutoConfiguration(after = {KvBridgeAutoConfiguration.class, TaskSchedulingAutoConfiguration.class})
@ConditionalOnBean(KvConnectors.class)
public final class KvBridgeSchedulingAutoConfiguration {

  /** kvbridge's scheduler threads are named after it, whatever the application's are named. */
  static final String THREAD_NAME_PREFIX = "kvbridge-";

  @Bean
  @ConditionalOnMissingBean
  ConnectorMaintenance kvBridgeConnectorMaintenance(
      KvConnectors connectors,
      KvBridgeProperties properties,
      ObjectProvider<ThreadPoolTaskSchedulerBuilder> builder) {
    return new ConnectorMaintenance(
        connectors,
        min(properties.lease().sweepInterval(), properties.lease().heartbeatInterval()),
        () ->
            builder
                .getIfAvailable(ThreadPoolTaskSchedulerBuilder::new)
                .poolSize(2)
                .threadNamePrefix(THREAD_NAME_PREFIX)
                .build());
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }
}
