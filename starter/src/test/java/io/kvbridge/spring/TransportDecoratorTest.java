package io.kvbridge.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.Role;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.Transport;
import java.util.List;
import java.util.Optional;
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
  private static final class Labelled implements Transport {
    private final String label;
    private final Transport delegate;
    private final LabellingDecorators record;

    Labelled(String label, Transport delegate, LabellingDecorators record) {
      this.label = label;
      this.delegate = delegate;
      this.record = record;
    }

    @Override
    public String agentName() {
      return delegate.agentName();
    }

    @Override
    public MemoryKind memoryKind() {
      return delegate.memoryKind();
    }

    @Override
    public KvMemory allocate(long sizeBytes) {
      record.allocatedThrough.add(label);
      return delegate.allocate(sizeBytes);
    }

    @Override
    public void register(KvMemory memory) {
      delegate.register(memory);
    }

    @Override
    public void deregister(KvMemory memory) {
      delegate.deregister(memory);
    }

    @Override
    public byte[] localMetadata() {
      return delegate.localMetadata();
    }

    @Override
    public String loadRemoteMetadata(byte[] metadata) {
      return delegate.loadRemoteMetadata(metadata);
    }

    @Override
    public void invalidateRemote(String agentName) {
      delegate.invalidateRemote(agentName);
    }

    @Override
    public TransferHandle post(
        TransferOp op,
        DescriptorList local,
        String remoteAgent,
        DescriptorList remote,
        Optional<byte[]> notification) {
      return delegate.post(op, local, remoteAgent, remote, notification);
    }

    @Override
    public TransferStatus status(TransferHandle handle) {
      return delegate.status(handle);
    }

    @Override
    public void release(TransferHandle handle) {
      delegate.release(handle);
    }

    @Override
    public void notify(String remoteAgent, byte[] message) {
      delegate.notify(remoteAgent, message);
    }

    @Override
    public List<Notification> drainNotifications() {
      return delegate.drainNotifications();
    }

    @Override
    public void close() {
      record.closed.add(label);
      delegate.close();
    }
  }
}
