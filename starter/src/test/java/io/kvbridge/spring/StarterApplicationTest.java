package io.kvbridge.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.discovery.etcd.EtcdDiscovery;
import io.kvbridge.discovery.etcd.testing.EtcdServer;
import io.kvbridge.spring.actuate.EtcdDiscoveryHealthIndicator;
import io.kvbridge.spring.actuate.KvBridgeEndpoint;
import io.kvbridge.spring.actuate.KvBridgeHealthContributor;
import io.kvbridge.spring.metrics.MicrometerConnectorObservers;
import io.kvbridge.spring.scheduling.ConnectorMaintenance;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

/** The starter as an application gets it: every auto-configuration found through the imports. */
class StarterApplicationTest {

  @Test
  void everyConcernIsConfiguredInAnApplicationWithActuatorAndMetrics() {
    try (ConfigurableApplicationContext context =
        new SpringApplicationBuilder(Application.class)
            .web(WebApplicationType.NONE)
            .properties(
                "spring.main.banner-mode=off",
                "management.endpoints.web.exposure.include=health,kvbridge")
            .run()) {
      assertThat(context.getBean(KvConnectors.class).provider().type()).isEqualTo("fake");
      assertThat(context.getBean(ConnectorMaintenance.class).isRunning()).isTrue();
      assertThat(context.getBeansOfType(KvBridgeHealthContributor.class)).hasSize(1);
      assertThat(context.getBeansOfType(KvBridgeEndpoint.class)).hasSize(1);
      assertThat(context.getBeansOfType(MicrometerConnectorObservers.class)).hasSize(1);

      Leases.grant(Leases.registered(context.getBean(KvConnectors.class).create()), "r-1");
      assertThat(
              context.getBean(MeterRegistry.class).get("kvbridge.leases.granted").counter().count())
          .isEqualTo(1);
    }
  }

  @Test
  void discoveryOnEtcdIsConfiguredWhenItsEndpointsAreSet() {
    try (EtcdServer etcd = EtcdServer.start();
        ConfigurableApplicationContext context =
            new SpringApplicationBuilder(Application.class)
                .web(WebApplicationType.NONE)
                .properties(
                    "spring.main.banner-mode=off",
                    "kvbridge.discovery.etcd.endpoints=" + etcd.endpoint())
                .run()) {
      EtcdDiscovery discovery = context.getBean(EtcdDiscovery.class);
      assertThat(context.getBean(KvConnectors.class).create().settings().peerDirectory())
          .isSameAs(discovery);
      assertThat(context.getBeansOfType(EtcdDiscoveryHealthIndicator.class)).hasSize(1);
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class Application {}
}
