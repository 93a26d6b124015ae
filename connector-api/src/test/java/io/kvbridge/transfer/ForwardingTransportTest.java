package io.kvbridge.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ForwardingTransportTest {

  /**
   * A method the base forgot would fall back to the interface's default, which a decorator's
   * wrapped transport never sees: prepared lists described afresh, telemetry always empty.
   */
  @Test
  void overridesEveryTransportMethodSoNoneFallsBackToItsDefault() {
    List<String> notForwarded =
        Arrays.stream(Transport.class.getMethods())
            .filter(m -> !Modifier.isStatic(m.getModifiers()))
            .filter(m -> !declaredByForwardingTransport(m))
            .map(Method::toGenericString)
            .toList();

    assertThat(notForwarded).isEmpty();
  }

  private static boolean declaredByForwardingTransport(Method m) {
    try {
      ForwardingTransport.class.getDeclaredMethod(m.getName(), m.getParameterTypes());
      return true;
    } catch (NoSuchMethodException e) {
      return false;
    }
  }
}
