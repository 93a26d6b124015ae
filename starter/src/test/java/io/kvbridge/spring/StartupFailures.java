package io.kvbridge.spring;

import static org.assertj.core.api.Assertions.assertThat;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;

/** Finds why a context failed to start. */
public final class StartupFailures {

  private StartupFailures() {}

  /** The first cause of type {@code type} in the context's start-up failure. */
  public static <T extends Throwable> T causeOfType(
      AssertableApplicationContext context, Class<T> type) {
    assertThat(context).hasFailed();
    for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
      if (type.isInstance(t)) {
        return type.cast(t);
      }
    }
    throw new AssertionError(
        "start-up failed without a " + type.getSimpleName(), context.getStartupFailure());
  }

  /** The invalid property that stopped start-up. */
  public static InvalidKvBridgePropertyException invalidProperty(
      AssertableApplicationContext context) {
    return causeOfType(context, InvalidKvBridgePropertyException.class);
  }
}
