package io.kvbridge.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.Role;
import io.kvbridge.transfer.ForwardingTransport;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.Transport;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

class TransportDecoratorTest {

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(KvBridgeAutoConfiguration.class))
          .withUserConfiguration(LabellingDecorators.class);

  @Test
  void decoratorsWrapTheTransportInTheirOrder() {
    runner.run(
        context -> {
          context.getBean(KvConnectors.class).create("prefill-0", Role.PRODUCER);

          assertThat(context.getBean(LabellingDecorators.class).wrapped)
              .containsExactly("inner around fake", "outer around inner");
        });
  }

  @Test
  void theConnectorUsesTheOutermostTransport() {
    runner.run(
        context -> {
          Leases.registered(context.getBean(KvConnectors.class).create());

          assertThat(context.getBean(LabellingDecorators.class).allocatedThrough)
              .containsExactly("outer", "inner");
        });
  }

  @Test
  void closingTheConnectorClosesEveryWrapper() {
    runner.run(
        context -> {
          KvConnector connector = context.getBean(KvConnectors.class).create();

          connector.close();

          assertThat(context.getBean(LabellingDecorators.class).closed)
              .containsExactly("outer", "inner");
        });
  }

  @Test
  void eachDecoratorSeesTheSettingsOfTheConnectorItWraps() {
    runner.run(
        context -> {
          context.getBean(KvConnectors.class).create("decode-7", Role.CONSUMER);

          assertThat(context.getBean(LabellingDecorators.class).engines)
              .containsExactly("decode-7", "decode-7");
        });
  }

  /** Two decorators, declared against their order, each wrapping in a {@link Labelled}. */
  @Configuration(proxyBeanMethods = false)
  static class LabellingDecorators {
    final List<String> wrapped = new CopyOnWriteArrayList<>();
    final List<String> engines = new CopyOnWriteArrayList<>();
    final List<String> allocatedThrough = new CopyOnWriteArrayList<>();
    final List<String> closed = new CopyOnWriteArrayList<>();

    @Bean
    @Order(2)
    TransportDecorator outer() {
      return (transport, settings) -> wrap("outer", transport, settings);
    }

    @Bean
    @Order(1)
    TransportDecorator inner() {
      return (transport, settings) -> wrap("inner", transport, settings);
    }

    private Transport wrap(String label, Transport transport, ConnectorSettings settings) {
      String around = transport instanceof Labelled l ? l.label : settings.type();
      wrapped.add(label + " around " + around);
      engines.add(settings.engineId());
      return new Labelled(label, transport, this);
    }
  }

  /** Passes every call on, recording allocations and closing. */
  private static final class Labelled extends ForwardingTransport {
    private final String label;
    private final LabellingDecorators record;

    Labelled(String label, Transport delegate, LabellingDecorators record) {
      super(delegate);
      this.label = label;
      this.record = record;
    }

    @Override
    public KvMemory allocate(long sizeBytes) {
      record.allocatedThrough.add(label);
      return super.allocate(sizeBytes);
    }

    @Override
    public void close() {
      record.closed.add(label);
      super.close();
    }
  }
}
