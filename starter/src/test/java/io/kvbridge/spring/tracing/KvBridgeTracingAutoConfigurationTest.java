package io.kvbridge.spring.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.observe.TraceContext;
import io.kvbridge.observe.TransferSpans;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.spring.KvBridgeAutoConfiguration;
import io.kvbridge.spring.KvConnectors;
import io.kvbridge.spring.Leases;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.test.simple.SimpleSpan;
import io.micrometer.tracing.test.simple.SimpleTracer;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * With {@code kvbridge.tracing.enabled} and a Micrometer tracer, one request's transfer is one
 * trace: P's lease span, and D's load span and its phases as its descendants.
 */
class KvBridgeTracingAutoConfigurationTest {

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  KvBridgeAutoConfiguration.class, KvBridgeTracingAutoConfiguration.class))
          .withBean(SimpleTracer.class, SimpleTracer::new);

  private final ApplicationContextRunner enabled =
      runner.withPropertyValues("kvbridge.tracing.enabled=true");

  @Test
  void consumersSpansJoinTheProducersTraceAsChildrenOfItsLeaseSpan() {
    enabled.run(
        context -> {
          SimpleTracer tracer = context.getBean(SimpleTracer.class);
          KvConnectors connectors = context.getBean(KvConnectors.class);
          KvConnector producer = Leases.registered(connectors.create("prefill-t", Role.PRODUCER));
          KvConnector consumer = Leases.registered(connectors.create("decode-t", Role.CONSUMER));

          Leases.read(producer, consumer, "r-1");

          SimpleSpan lease = only(tracer, TransferSpans.LEASE);
          SimpleSpan load = only(tracer, TransferSpans.LOAD);
          String w3cTraceId = padded(lease.getTraceId());
          assertThat(load.getTraceId()).isEqualTo(w3cTraceId);
          assertThat(load.getParentId()).isEqualTo(lease.getSpanId());
          for (String phase :
              List.of(
                  TransferSpans.LOAD_CONFIRM,
                  TransferSpans.LOAD_READ,
                  TransferSpans.LOAD_VALIDATE)) {
            SimpleSpan child = only(tracer, phase);
            assertThat(child.getParentId()).as(phase).isEqualTo(load.getSpanId());
            assertThat(child.getTraceId()).as(phase).isEqualTo(w3cTraceId);
            assertThat(child.getEndTimestamp().toEpochMilli()).as(phase).isPositive();
          }
          assertThat(only(tracer, TransferSpans.LEASE_GRANT).getParentId())
              .isEqualTo(lease.getSpanId());
        });
  }

  @Test
  void spansCarryTheEngineTheOutcomeAndTheLeasesEndReason() {
    enabled.run(
        context -> {
          SimpleTracer tracer = context.getBean(SimpleTracer.class);
          KvConnectors connectors = context.getBean(KvConnectors.class);
          KvConnector producer = Leases.registered(connectors.create("prefill-t", Role.PRODUCER));
          KvConnector consumer = Leases.registered(connectors.create("decode-t", Role.CONSUMER));

          Leases.read(producer, consumer, "r-1");

          assertThat(only(tracer, TransferSpans.LEASE).getTags())
              .containsEntry(TransferSpans.END_REASON, "read")
              .containsEntry(TransferSpans.ENGINE, "prefill-t")
              .containsEntry(TransferSpans.REQUEST_ID, "r-1");
          assertThat(only(tracer, TransferSpans.LOAD).getTags())
              .containsEntry(TransferSpans.OUTCOME, "received")
              .containsEntry(TransferSpans.ENGINE, "decode-t")
              .containsEntry(TransferSpans.PRODUCER, "prefill-t");
          assertThat(only(tracer, TransferSpans.LOAD_READ).getTags())
              .containsEntry(
                  TransferSpans.BYTES,
                  Long.toString((long) Leases.BLOCKS.size() * Leases.LAYOUT.blockBytes()));
          assertThat(only(tracer, TransferSpans.LOAD_VALIDATE).getTags())
              .containsEntry(TransferSpans.REPLY, "ack");
        });
  }

  @Test
  void revokedLeaseEndsItsSpanWithTheReasonRevoked() {
    enabled.run(
        context -> {
          SimpleTracer tracer = context.getBean(SimpleTracer.class);
          KvConnector producer = Leases.registered(context.getBean(KvConnectors.class).create());

          TransferParams params = Leases.grant(producer, "r-1");
          producer.scheduler().revoke("r-1", "client went away");

          assertThat(params.traceContext()).isInstanceOf(TraceContext.W3c.class);
          SimpleSpan lease = only(tracer, TransferSpans.LEASE);
          assertThat(lease.getTags()).containsEntry(TransferSpans.END_REASON, "revoked");
          assertThat(lease.getEndTimestamp().toEpochMilli()).isPositive();
        });
  }

  @Test
  void tracingIsOffByDefaultAndTheParamsCarryNoTrace() {
    runner.run(
        context -> {
          assertThat(context).doesNotHaveBean(MicrometerTransferTracers.class);
          KvConnector producer = Leases.registered(context.getBean(KvConnectors.class).create());

          TransferParams params = Leases.grant(producer, "r-1");

          assertThat(params.traceContext()).isSameAs(TraceContext.ABSENT);
          assertThat(context.getBean(SimpleTracer.class).getSpans()).isEmpty();
        });
  }

  @Test
  void tracingNeedsATracer() {
    new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                KvBridgeAutoConfiguration.class, KvBridgeTracingAutoConfiguration.class))
        .withPropertyValues("kvbridge.tracing.enabled=true")
        .run(context -> assertThat(context).doesNotHaveBean(MicrometerTransferTracers.class));
  }

  @Test
  void connectorsWorkWithoutMicrometerTracingOnTheClassPath() {
    enabled
        .withClassLoader(new FilteredClassLoader(Tracer.class))
        .run(
            context -> {
              assertThat(context).doesNotHaveBean(MicrometerTransferTracers.class);
              KvConnector producer =
                  Leases.registered(context.getBean(KvConnectors.class).create());
              assertThat(Leases.grant(producer, "r-1").traceContext())
                  .isSameAs(TraceContext.ABSENT);
            });
  }

  private static SimpleSpan only(SimpleTracer tracer, String name) {
    List<SimpleSpan> named =
        tracer.getSpans().stream().filter(s -> name.equals(s.getName())).toList();
    assertThat(named).as("spans named %s", name).hasSize(1);
    return named.get(0);
  }

  /** A trace id as W3C writes it: 32 hex digits, a 64-bit id left-padded with zeros. */
  private static String padded(String traceId) {
    return "0".repeat(32 - traceId.length()) + traceId;
  }
}
