package io.kvbridge.sample.demo;

import io.kvbridge.sample.SampleProperties;
import io.kvbridge.sample.node.Node;
import io.kvbridge.sample.router.PdRouter;
import io.kvbridge.spring.KvBridgeProperties;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.client.RestClient;

/** Runs the demo at start-up unless {@code kvbridge.sample.demo.enabled=false}. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty(name = "kvbridge.sample.demo.enabled", matchIfMissing = true)
public class DemoConfiguration {

  /** The demo's summary, once known. */
  @Bean
  public DemoReport demoReport() {
    return new DemoReport();
  }

  /** Shows the summary on the {@code info} endpoint. */
  @Bean
  public DemoInfoContributor demoInfoContributor(DemoReport report) {
    return new DemoInfoContributor(report);
  }

  /** Starts the demo when the application is ready. */
  @Bean
  public DemoRunner demoRunner(
      SampleProperties properties,
      KvBridgeProperties kvbridge,
      ObjectProvider<Node> nodes,
      ObjectProvider<PdRouter> router,
      RestClient.Builder clients,
      DemoReport report) {
    return new DemoRunner(properties, kvbridge, nodes, router, clients, report);
  }
}
