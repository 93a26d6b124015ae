package io.kvbridge.spring;

import io.kvbridge.observe.TransferTracer;
import io.kvbridge.spi.ConnectorSettings;

/**
 * Supplies the tracer of each connector {@link KvConnectors} creates. At most one bean of this type
 * is used (a second makes every connector untraced, rather than traced twice); the tracing
 * auto-configuration registers one when {@code kvbridge.tracing.enabled=true} and the application
 * has a Micrometer {@code Tracer}. Without one, connectors use {@link TransferTracer#NONE}.
 *
 * <p>Called on the thread that creates the connector; the returned tracer follows the threading
 * rules of {@link TransferTracer}.
 */
@FunctionalInterface
public interface ConnectorTracerFactory {

  /** The tracer for the connector about to be created with {@code settings}. */
  TransferTracer tracerFor(ConnectorSettings settings);
}
