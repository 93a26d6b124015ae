package io.kvbridge.spring;

import static org.assertj.core.api.Assertions.assertThat;

import org.springframework.boot.test.context.assertj.ApplicationContextAssertProvider;
import org.springframework.context.ApplicationContext;

/** Finds why a context failed to start. */
public final class StartupFailures {

  private StartupFailures() {}

  /** The first cause of type {@code type} in the context's start-up failure. */
  public static <T extends Throwable, C extends ApplicationContext> T causeOfType(
      ApplicationContextAssertProvider<C> context, Class<T> type) {
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
  public static <C extends ApplicationContext> InvalidKvBridgePropertyException invalidProperty(
      ApplicationContextAssertProvider<C> context) {
    return causeOfType(context, InvalidKvBridgePropertyException.class);
  }
}
