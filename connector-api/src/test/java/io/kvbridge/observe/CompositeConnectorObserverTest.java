package io.kvbridge.observe;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.lease.Lease;
import io.kvbridge.lease.LeaseEndView;
import io.kvbridge.lease.LeaseTable;
import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.lease.LeaseView;
import io.kvbridge.time.ManualClock;
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

  @Test
  void aTablesRenewalsAndEndsReachEveryObserverThatReadsViews() {
    List<String> heard = new CopyOnWriteArrayList<>();
    ManualClock clock = new ManualClock();
    LeaseTable table =
        new LeaseTable(
            clock,
            new LeaseTerms(Duration.ofSeconds(30), Duration.ofSeconds(90)),
            CompositeConnectorObserver.of(
                List.of(viewReader("first", heard), viewReader("second", heard))));
    Lease lease = table.grant("r-1", List.of(1), 1, new byte[] {1});
    clock.advance(Duration.ofSeconds(1));

    table.renew("r-1", lease.token().value());
    table.revoke("r-1", "aborted");

    assertThat(heard)
        .containsExactly(
            "first: renewed r-1",
            "second: renewed r-1",
            "first: ended r-1 REVOKED",
            "second: ended r-1 REVOKED");
  }

  private static ConnectorObserver viewReader(String name, List<String> heard) {
    return new ConnectorObserver() {
      @Override
      public void renewed(LeaseView lease) {
        heard.add(name + ": renewed " + lease.requestId());
      }

      @Override
      public void ended(LeaseEndView end) {
        heard.add(name + ": ended " + end.lease().requestId() + " " + end.reason());
      }
    };
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
