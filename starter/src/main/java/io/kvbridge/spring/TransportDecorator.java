package io.kvbridge.spring;

import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.transfer.Transport;

/**
 * Wraps the transport of each connector {@link KvConnectors} creates, before the connector is built
 * around it: to inject faults in tests and demos, or to trace or measure what crosses the
 * transport. Every bean of this type applies, in {@link org.springframework.core.annotation.Order
 * order}, each to the previous one's result: the first wraps the connector type's own transport,
 * and the connector calls the one the last returns.
 *
 * <p>The connector owns what {@link #decorate} returns and closes it when the connector closes; a
 * wrapper closes the transport it wraps when it is closed itself. Extend {@link
 * io.kvbridge.transfer.ForwardingTransport} and override only the calls the wrapper changes: it
 * passes every other call on, prepared descriptor lists included, so the connector keeps the
 * wrapped transport's prepared reads.
 *
 * <p>Called on the thread that creates the connector; the returned transport must be as safe for
 * concurrent use as the {@link Transport} contract asks.
 */
@FunctionalInterface
public interface TransportDecorator {

  /**
   * The transport that the connector about to be created with {@code settings} will use in place of
   * {@code transport}: a wrapper around it, or {@code transport} itself.
   */
  Transport decorate(Transport transport, ConnectorSettings settings);
}
