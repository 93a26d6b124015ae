package io.kvbridge.spring.tracing;

import io.kvbridge.observe.TransferTracer;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spring.ConnectorTracerFactory;
import io.micrometer.tracing.Tracer;

/**
 * Gives every connector a tracer that records its spans through a Micrometer {@link Tracer}, each
 * span tagged with the connector's engine id.
 *
 * <p>Spans are made with the tracer directly rather than as observations: D's load span must take
 * its parent from the W3C fields of the transfer parameters whatever propagation format the
 * application's HTTP calls use, and kvbridge's meters already time each step.
 *
 * <p>Thread-safe.
 */
public final class MicrometerTransferTracers implements ConnectorTracerFactory {

  private final Tracer tracer;

  /** Records through {@code tracer}. */
  public MicrometerTransferTracers(Tracer tracer) {
    this.tracer = tracer;
  }

  @Override
  public TransferTracer tracerFor(ConnectorSettings settings) {
    return new MicrometerTransferTracer(tracer, settings.engineId());
  }
}
