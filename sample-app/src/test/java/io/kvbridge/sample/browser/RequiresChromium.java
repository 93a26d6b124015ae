package io.kvbridge.sample.browser;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Runs a test class only where a headless Chromium runs ({@link HeadlessChromium#binary}), so a
 * missing browser never passes silently. Where there is none, the class fails when the browser
 * tests are required, and is skipped with the reason, printed, otherwise. They are required when
 * the build says so ({@code -Dkvbridge.chromium.required=true}, handed to the tests as {@code
 * kvbridge.test.chromium-required}), and otherwise in CI ({@code CI=true}), where {@code
 * scripts/ensure-chromium.sh} has installed it.
 *
 * <p>Decided before the class's application context starts, so a skipped class starts nothing.
 */
public final class RequiresChromium implements ExecutionCondition {

  static final String REQUIRED_PROPERTY = "kvbridge.test.chromium-required";

  @Override
  public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
    HeadlessChromium.Found chromium = HeadlessChromium.binary();
    if (chromium.binary().isPresent()) {
      return ConditionEvaluationResult.enabled("runs in " + chromium.description());
    }
    String required = requiredBecause();
    if (!required.isEmpty()) {
      throw new AssertionError(
          chromium.description() + " (" + required + ": the browser tests must run)");
    }
    String reason =
        chromium.description()
            + " (the browser tests are skipped: CI is not true and"
            + " kvbridge.chromium.required is not set)";
    if (context.getTestMethod().isEmpty()) {
      System.err.println("[" + context.getDisplayName() + "] SKIPPED: " + reason);
    }
    return ConditionEvaluationResult.disabled(reason);
  }

  /** Why the browser tests must run here, or empty when they may be skipped. */
  private static String requiredBecause() {
    String property = System.getProperty(REQUIRED_PROPERTY, "").trim();
    if (!property.isEmpty()) {
      return Boolean.parseBoolean(property) ? "kvbridge.chromium.required=true" : "";
    }
    return "true".equalsIgnoreCase(System.getenv("CI")) ? "CI=true" : "";
  }
}
