package io.kvbridge.spring.tracing;

import io.kvbridge.observe.TraceContext;
import io.kvbridge.observe.TransferSpan;
import io.kvbridge.observe.TransferSpans;
import io.kvbridge.observe.TransferTracer;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import java.util.Optional;

/**
 * One engine's {@link TransferTracer} over a Micrometer {@link Tracer}. A lease span's parent is
 * the span current on the thread that finished the request, if any; a load span's parent is the
 * producer's lease span named by the transfer parameters' {@code traceparent}, its trace id and
 * sampling decision kept, so the consumer's spans land in the producer's trace.
 *
 * <p>Thread-safe, as the {@link Tracer} is.
 */
final class MicrometerTransferTracer implements TransferTracer {

  private final Tracer tracer;
  private final String engineId;

  MicrometerTransferTracer(Tracer tracer, String engineId) {
    this.tracer = tracer;
    this.engineId = engineId;
  }

  @Override
  public TransferSpan startLease(String requestId) {
    return started(tracer.nextSpan().name(TransferSpans.LEASE).start(), requestId);
  }

  @Override
  public TransferSpan startLoad(String requestId, String producerEngineId, TraceContext parent) {
    Span span;
    if (parent instanceof TraceContext.W3c w3c) {
      io.micrometer.tracing.TraceContext remote =
          tracer
              .traceContextBuilder()
              .traceId(w3c.traceId())
              .spanId(w3c.parentId())
              .sampled(w3c.sampled())
              .build();
      span = tracer.spanBuilder().setParent(remote).name(TransferSpans.LOAD).start();
    } else {
      span = tracer.nextSpan().name(TransferSpans.LOAD).start();
    }
    span.tag(TransferSpans.PRODUCER, producerEngineId);
    return started(span, requestId);
  }

  private TransferSpan started(Span span, String requestId) {
    span.tag(TransferSpans.ENGINE, engineId).tag(TransferSpans.REQUEST_ID, requestId);
    return new MicrometerSpan(span);
  }

  /** A kvbridge span over a Micrometer span. */
  private final class MicrometerSpan implements TransferSpan {

    private final Span span;

    MicrometerSpan(Span span) {
      this.span = span;
    }

    @Override
    public TransferSpan startChild(String name) {
      return new MicrometerSpan(
          tracer.nextSpan(span).name(name).tag(TransferSpans.ENGINE, engineId).start());
    }

    @Override
    public void tag(String key, String value) {
      span.tag(key, value);
    }

    @Override
    public void tag(String key, long value) {
      span.tag(key, value);
    }

    @Override
    public void event(String name) {
      span.event(name);
    }

    @Override
    public void error(String reason) {
      span.error(new TransferFailure(reason));
    }

    @Override
    public void end() {
      span.end();
    }

    @Override
    public TraceContext context() {
      io.micrometer.tracing.TraceContext context = span.context();
      try {
        return TraceContext.of(
            context.traceId(),
            context.spanId(),
            Boolean.TRUE.equals(context.sampled()),
            Optional.empty());
      } catch (IllegalArgumentException e) {
        // A tracer whose ids are not hex (a no-op one gives empty ids) has no W3C context.
        return TraceContext.ABSENT;
      }
    }
  }

  /** Why a span failed, as the tracer records errors; carries no stack trace. */
  static final class TransferFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    TransferFailure(String reason) {
      super(reason, null, false, false);
    }
  }
}
