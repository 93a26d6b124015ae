package io.kvbridge.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.transfer.TransferTelemetry;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class CompositeConnectorObserverTest {

  @Test
  void overridesEveryObserverEventSoNoneIsDropped() {
    List<String> notForwarded =
        Arrays.stream(ConnectorObserver.class.getMethods())
            .filter(m -> !Modifier.isStatic(m.getModifiers()))
            .filter(m -> !declaredByTheComposite(m))
            .map(Method::toGenericString)
            .toList();

    assertThat(notForwarded).isEmpty();
  }

  @Test
  void whatTheTransportMeasuredReachesEveryObserverInOrder() {
    List<String> heard = new CopyOnWriteArrayList<>();
    TransferTelemetry measured =
        new TransferTelemetry(Duration.ofNanos(15_000), Duration.ofNanos(250_000), 3072, 3);

    CompositeConnectorObserver.of(List.of(listener("first", heard), listener("second", heard)))
        .transferTelemetry("r-1", measured);

    assertThat(heard).containsExactly("first: r-1 " + measured, "second: r-1 " + measured);
  }

  private static ConnectorObserver listener(String name, List<String> heard) {
    return new ConnectorObserver() {
      @Override
      public void transferTelemetry(String requestId, TransferTelemetry telemetry) {
        heard.add(name + ": " + requestId + " " + telemetry);
      }
    };
  }

  private static boolean declaredByTheComposite(Method m) {
    try {
      CompositeConnectorObserver.class.getDeclaredMethod(m.getName(), m.getParameterTypes());
      return true;
    } catch (NoSuchMethodException e) {
      return false;
    }
  }
}
