package io.kvbridge.sample;

import io.kvbridge.spring.TransportDecorator;
import io.kvbridge.tck.faults.Faults;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;

/** Puts every node's transport of a test application into one fault group, which tests arm. */
@TestConfiguration(proxyBeanMethods = false)
public class FaultInjection {

  /** The fault group. */
  @Bean
  public Faults faults() {
    return new Faults(1);
  }

  /** Wraps each connector's transport in the group. */
  @Bean
  public TransportDecorator faultInjection(Faults faults) {
    return (transport, settings) -> faults.decorate(transport);
  }
}
