package io.kvbridge.nixl;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.nixl.testing.RequiresNixl;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.tck.PullProtocolConformanceTest;
import io.kvbridge.tck.protocol.PullProtocolFixture;
import io.kvbridge.transfer.TransferTelemetry;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The pull protocol over real NIXL: two engines in one JVM, UCX over loopback, host memory. Beyond
 * the suite ({@link Telemetry}): NIXL's own telemetry of each read reaches the consumer's observer
 * when the consumer's agent captures it (through the suite's recording decorator, a {@link
 * io.kvbridge.transfer.ForwardingTransport}).
 */
@ExtendWith(RequiresNixl.class)
class NixlPullProtocolConformanceTest extends PullProtocolConformanceTest {

  /** The properties of the engines {@link Telemetry} starts from now on. */
  private final Map<String, String> properties = new HashMap<>(Map.of(NixlOptions.MEMORY, "dram"));

  NixlPullProtocolConformanceTest() {
    super(NixlConnectorUnderTest.in(MemoryMode.DRAM));
  }

  /** NIXL's telemetry of the consumer's reads, captured by the agents of the engines that ask. */
  @Nested
  class Telemetry extends PullProtocolFixture {

    Telemetry() {
      super(new NixlConnectorUnderTest(properties));
    }

    @Test
    void nixlTelemetryOfTheReadReachesTheConsumersObserverWithWhatWasPosted() {
      properties.put(NixlOptions.TELEMETRY, "true");
      Recording events = new Recording();
      observer = events;
      consumer = node("decode-measured", Role.CONSUMER, CONSUMER_LAYOUT);
      TransferParams params = prefill("p-1", List.of(3, 17, 5));

      long started = System.nanoTime();
      load("d-1", params, List.of(40, 2, 63));
      settle("d-1");
      Duration elapsed = Duration.ofNanos(System.nanoTime() - started);

      assertThat(events.completedBytes).containsExactly(3L * 1024);
      assertThat(events.posted).hasSize(1);
      // One (D rank, P rank) pair: one READ, measured once.
      assertThat(events.measured)
          .singleElement()
          .satisfies(
              m -> {
                TransferTelemetry t = m.telemetry();
                assertThat(m.requestId()).isEqualTo("d-1");
                assertThat(t.bytes()).isEqualTo(3L * 1024);
                assertThat(t.descriptors())
                    .isEqualTo(events.posted.get(0).descriptors())
                    .isPositive();
                assertThat(t.postTime()).isBetween(Duration.ZERO, elapsed);
                assertThat(t.transferTime()).isBetween(Duration.ZERO, elapsed);
              });
    }

    @Test
    void withoutNixlTelemetryTheConsumersObserverIsToldOfNoMeasurement() {
      Recording events = new Recording();
      observer = events;
      consumer = node("decode-unmeasured", Role.CONSUMER, CONSUMER_LAYOUT);

      load("d-1", prefill("p-1", List.of(3, 17, 5)), List.of(40, 2, 63));
      settle("d-1");

      assertThat(events.completedBytes).containsExactly(3L * 1024);
      assertThat(events.measured).isEmpty();
    }
  }

  /** What a consumer reports of its reads. */
  private static final class Recording implements ConnectorObserver {

    /** A posted load: its descriptors over every rank pair. */
    record Posted(String requestId, int descriptors) {}

    /** What the transport measured of one read of a load. */
    record Measured(String requestId, TransferTelemetry telemetry) {}

    final List<Posted> posted = new CopyOnWriteArrayList<>();
    final List<Measured> measured = new CopyOnWriteArrayList<>();
    final List<Long> completedBytes = new CopyOnWriteArrayList<>();

    @Override
    public void readPosted(String requestId, int descriptors, long bytes, long nanos) {
      posted.add(new Posted(requestId, descriptors));
    }

    @Override
    public void transferTelemetry(String requestId, TransferTelemetry telemetry) {
      measured.add(new Measured(requestId, telemetry));
    }

    @Override
    public void transferCompleted(String requestId, long bytes, long nanos) {
      completedBytes.add(bytes);
    }
  }
}
