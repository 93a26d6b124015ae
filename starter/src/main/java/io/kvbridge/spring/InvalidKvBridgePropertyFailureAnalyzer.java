package io.kvbridge.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/**
 * Reports an invalid {@code kvbridge.*} property as what is wrong and which property to change.
 * Ordered first so it wins over the generic report of the binding failure that wraps it.
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
class InvalidKvBridgePropertyFailureAnalyzer
    extends AbstractFailureAnalyzer<InvalidKvBridgePropertyException> {

  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, InvalidKvBridgePropertyException cause) {
    return new FailureAnalysis(
        "Invalid kvbridge configuration: " + cause.getMessage(),
        "Update " + cause.property() + " in your application's configuration.",
        cause);
  }
}
