package io.kvbridge.spring;

import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.spi.ConnectorSettings;

/**
 * Supplies an observer for each connector {@link KvConnectors} creates. Every bean of this type
 * contributes one observer per connector; the metrics auto-configuration registers one when a
 * Micrometer {@code MeterRegistry} is present.
 *
 * <p>Called on the thread that creates the connector; the returned observer follows the threading
 * rules of {@link ConnectorObserver}.
 */
@FunctionalInterface
public interface ConnectorObserverFactory {

  /** The observer for the connector about to be created with {@code settings}. */
  ConnectorObserver observerFor(ConnectorSettings settings);
}
