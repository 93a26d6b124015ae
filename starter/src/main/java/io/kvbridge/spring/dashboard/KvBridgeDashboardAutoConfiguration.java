package io.kvbridge.spring.dashboard;

import io.kvbridge.spring.dashboard.KvBridgeDashboard.EndpointLocation;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * Auto-configuration of the operators' dashboard, when {@code kvbridge.dashboard.enabled=true} in a
 * servlet web application: the page at {@value KvBridgeDashboard#PATH}, which reads the {@code
 * kvbridge} management endpoint on the same server. Where the endpoint cannot be read there (no
 * Actuator, not exposed over HTTP, served on a separate management port) the page says why.
 */
@AutoConfiguration
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(RouterFunction.class)
@ConditionalOnBooleanProperty("kvbridge.dashboard.enabled")
@EnableConfigurationProperties(DashboardProperties.class)
public final class KvBridgeDashboardAutoConfiguration {

  static final String NO_ACTUATOR =
      "Spring Boot Actuator is not on the class path, so there is no kvbridge endpoint to read:"
          + " add spring-boot-starter-actuator to the application.";

  static final String NOT_EXPOSED =
      "The kvbridge endpoint is not exposed over HTTP: add kvbridge to"
          + " management.endpoints.web.exposure.include (e.g. health,kvbridge).";

  @Bean
  @ConditionalOnMissingBean
  KvBridgeDashboard kvBridgeDashboard(
      DashboardProperties properties, ObjectProvider<EndpointLocator> locator) {
    EndpointLocator fallback = () -> new EndpointLocation.Unreachable(NO_ACTUATOR);
    return new KvBridgeDashboard(
        properties.pollInterval(),
        properties.historySize(),
        () -> locator.getIfAvailable(() -> fallback).locate());
  }

  @Bean
  RouterFunction<ServerResponse> kvBridgeDashboardRoutes(KvBridgeDashboard dashboard) {
    return dashboard.routes();
  }

  /** Where the endpoint is, asked each time the page loads. */
  @FunctionalInterface
  interface EndpointLocator {
    EndpointLocation locate();
  }

  /** With Actuator: the endpoint's path as Actuator maps it, if it serves it here over HTTP. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass({PathMappedEndpoints.class, ManagementPortType.class})
  static class WithActuator {

    @Bean
    EndpointLocator kvBridgeDashboardEndpointLocator(
        ObjectProvider<PathMappedEndpoints> endpoints, Environment environment) {
      return () -> {
        ManagementPortType port = ManagementPortType.get(environment);
        if (port == ManagementPortType.DIFFERENT) {
          return new EndpointLocation.Unreachable(
              "The management endpoints are served on their own port (management.server.port="
                  + environment.getProperty("management.server.port")
                  + "), which this page cannot read: it reads the kvbridge endpoint on the"
                  + " server that serves the page.");
        }
        if (port == ManagementPortType.DISABLED) {
          return new EndpointLocation.Unreachable(
              "The management endpoints are not served over HTTP (management.server.port=-1).");
        }
        PathMappedEndpoints mapped = endpoints.getIfAvailable();
        String path = mapped == null ? null : mapped.getPath(EndpointId.of("kvbridge"));
        return path == null
            ? new EndpointLocation.Unreachable(NOT_EXPOSED)
            : new EndpointLocation.At(path);
      };
    }
  }
}
