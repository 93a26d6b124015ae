package io.kvbridge.spring.tracing;

import io.micrometer.tracing.Tracer;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of kvbridge's tracing: when {@code kvbridge.tracing.enabled=true} and the
 * application has a Micrometer {@link Tracer}, every connector opens spans for each request's
 * transfer path through it.
 */
@AutoConfiguration(
    afterName = {
      "org.springframework.boot.micrometer.tracing.autoconfigure.MicrometerTracingAutoConfiguration",
      "org.springframework.boot.micrometer.tracing.brave.autoconfigure.BraveAutoConfiguration",
      "org.springframework.boot.micrometer.tracing.opentelemetry.autoconfigure"
          + ".OpenTelemetryTracingAutoConfiguration"
    })
@ConditionalOnClass(Tracer.class)
@ConditionalOnBooleanProperty("kvbridge.tracing.enabled")
@ConditionalOnBean(Tracer.class)
public final class KvBridgeTracingAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  MicrometerTransferTracers kvBridgeMicrometerTracers(Tracer tracer) {
    return new MicrometerTransferTracers(tracer);
  }
}
