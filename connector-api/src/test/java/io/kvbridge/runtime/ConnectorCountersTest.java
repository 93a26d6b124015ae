package io.kvbridge.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.observe.ConnectorObserver;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ConnectorCountersTest {

  /** An event the counters forgot would never reach the user's observer, metrics included. */
  @Test
  void overridesEveryObserverEventSoNoneIsDropped() {
    List<String> notForwarded =
        Arrays.stream(ConnectorObserver.class.getMethods())
            .filter(m -> !Modifier.isStatic(m.getModifiers()))
            .filter(m -> !declaredByTheCounters(m))
            .map(Method::toGenericString)
            .toList();

    assertThat(notForwarded).isEmpty();
  }

  private static boolean declaredByTheCounters(Method m) {
    try {
      ConnectorCounters.class.getDeclaredMethod(m.getName(), m.getParameterTypes());
      return true;
    } catch (NoSuchMethodException e) {
      return false;
    }
  }
}
