package io.kvbridge.tck;

import io.kvbridge.spi.TransportProvider;
import io.kvbridge.transfer.Transport;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

/**
 * What the kit needs to know of a connector to run its suites against it: the one object a
 * connector module implements. Each suite's entry class ({@link TransportConformanceTest}, {@link
 * PullProtocolConformanceTest}, {@link ShapeTranslationConformanceTest}, and in {@code
 * io.kvbridge.tck.schedule} {@code ScheduleExamplesConformanceTest} and {@code
 * FaultScheduleConformance}) takes one in its constructor; a connector module extends the entry
 * class with a constructor that passes its own:
 *
 * <pre>{@code
 * class MyTransportConformanceTest extends TransportConformanceTest {
 *   MyTransportConformanceTest() {
 *     super(new MyConnectorUnderTest());
 *   }
 * }
 * }</pre>
 *
 * <p>JUnit creates the entry class anew for every test, so every test gets an object of its own:
 * whatever it holds (a fabric, a directory, a counter) is that test's alone. A jqwik property gets
 * one for all its tries. The suites call it on the test's thread only.
 *
 * <p>A suite uses one of the two ways in: the pull-protocol and shape-translation suites start
 * engines through {@link #provider()}, as an application would; the transport and fault-schedule
 * suites create raw agents with {@link #newTransport}. Agents of the two ways never meet.
 *
 * <p>Every other method has a default that fits a connector whose engines answer handshakes in the
 * JVM ({@code local}) and whose transport keeps the promises that need not be kept everywhere; a
 * connector overrides only where it differs.
 */
public interface ConnectorUnderTest {

  /**
   * The provider of the connector type under test. The suites create every engine's connector
   * through it, as {@code ConnectorRegistry} does for an application, with {@link
   * #connectorProperties()}.
   */
  TransportProvider provider();

  /**
   * The connector-specific properties of every engine the suites start, read at each start: an
   * object may change them between the engines of one test.
   */
  default Map<String, String> connectorProperties() {
    return Map.of();
  }

  /**
   * Creates a fresh agent named {@code agentName} that has loaded no peer's metadata; the suite
   * closes it. Agents this object creates must reach each other once they loaded each other's
   * metadata; agents of different objects must not collide.
   */
  Transport newTransport(String agentName);

  /** Where the engines the suites start answer handshakes: {@code local}, in this JVM. */
  default String handshakeAddress() {
    return "local";
  }

  /** An address of {@link #handshakeAddress()}'s scheme where nobody answers. */
  default String unreachableHandshakeAddress() {
    return "local://nobody-" + UUID.randomUUID();
  }

  /**
   * How long a suite waits for asynchronous progress (a transfer to settle, a notification to
   * arrive, engines to settle after a step) before it fails the test. Only a failing test waits it
   * out.
   */
  default Duration patience() {
    return Duration.ofSeconds(30);
  }

  /**
   * Whether closing an agent stops peers from writing into its memory while the memory lives.
   * One-sided transports over shared memory (NIXL with UCX's cma or sm) cannot promise it: their
   * peers copy straight into the process's pages. kvbridge does not rely on it: a producer's memory
   * is only ever read, and an engine frees its memory after closing its connector.
   */
  default boolean closingRevokesPeerAccess() {
    return true;
  }

  /**
   * Whether the agents {@link #newTransport} creates measure their own transfers ({@link
   * Transport#telemetry}); the default, a transport that measures nothing, reports no telemetry.
   */
  default boolean measuresTransfers() {
    return false;
  }
}
