package io.kvbridge.sample;

import io.kvbridge.sample.completions.ClientDisconnects;
import io.kvbridge.sample.engine.EngineFactory;
import io.kvbridge.spring.KvBridgeProperties;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * A disaggregated prefill/decode deployment on kvbridge. By default one JVM runs a prefill node, a
 * decode node and the router, each engine on its own connector, and then runs the demo workload;
 * the profiles {@code prefill}, {@code decode} and {@code router} run one node per process.
 */
@SpringBootApplication
@EnableConfigurationProperties(SampleProperties.class)
public class SampleApplication {

  /** Starts the application. */
  public static void main(String[] args) {
    SpringApplication.run(SampleApplication.class, args);
  }

  /**
   * Refuses properties under {@code kvbridge.sample.} that the sample does not have, before any
   * bean is created.
   */
  @Bean
  static BeanFactoryPostProcessor samplePropertyNames(Environment environment) {
    return new SamplePropertyNames(environment);
  }

  /** Watches the connections of the clients whose requests the nodes and the router serve. */
  @Bean
  public ClientDisconnects clientDisconnects(SampleProperties sample) {
    return new ClientDisconnects(sample.disconnectCheckInterval());
  }

  /**
   * How this JVM's engines are built: the load-failure policy, the step interval, the context, the
   * prefill cost; each node gives its engine's shape.
   */
  @Bean
  public EngineFactory engineFactory(SampleProperties sample, KvBridgeProperties kvbridge) {
    return new EngineFactory(
        kvbridge.loadFailurePolicy(),
        sample.engine().stepInterval(),
        sample.engine().context(),
        sample.engine().prefillCost());
  }
}
