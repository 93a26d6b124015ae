package io.kvbridge.spring;

import io.kvbridge.spi.ConnectorUnavailableException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/** Reports a selected connector that cannot run on this machine, with its reason. */
@Order(Ordered.HIGHEST_PRECEDENCE)
class ConnectorUnavailableFailureAnalyzer
    extends AbstractFailureAnalyzer<ConnectorUnavailableException> {

  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, ConnectorUnavailableException cause) {
    return new FailureAnalysis(
        cause.getMessage(),
        "Install what the reason names on this machine, or set kvbridge.connector.type to a"
            + " connector that can run here.",
        cause);
  }
}
