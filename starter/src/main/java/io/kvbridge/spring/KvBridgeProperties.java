package io.kvbridge.spring;

import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.spi.ConnectorProperties;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.LoadFailurePolicy;
import io.kvbridge.spi.Role;
import io.kvbridge.time.DurationText;
import io.kvbridge.time.MonotonicClock;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Configuration of kvbridge, under the prefix {@code kvbridge}. The values a connector runs with
 * are checked by {@link ConnectorSettings} when the connectors are set up, and the values only the
 * starter reads are checked here when they are bound: either way an invalid one stops start-up with
 * an {@link InvalidKvBridgePropertyException} that names the property and what it accepts.
 *
 * <p>A connector's own settings are not held here: every property under {@code kvbridge.<type>.},
 * for each connector type on the class path, reaches the connectors as {@code <type>.<name>} (e.g.
 * {@code kvbridge.nixl.memory} as {@code nixl.memory}), and the connector of that type checks it.
 *
 * @param connector Which connector this application uses.
 * @param role What this engine does: 'producer' (prefill node, grants leases), 'consumer' (decode
 *     node, reads from producers) or 'both'.
 * @param engineId This engine's identity in handshakes. Unique in the deployment.
 * @param lease How long producers hold blocks for consumers, and how both sides keep leases alive.
 * @param replyTimeout How long a consumer waits for the producer's ACK or NACK after a read before
 *     the load counts as failed.
 * @param handshake Where this engine answers handshakes and how long a consumer waits for one.
 * @param loadFailurePolicy What the engine does with a request whose KV cache could not be loaded:
 *     'fail' (end it with an error) or 'recompute' (prefill it locally).
 */
@ConfigurationProperties("kvbridge")
public record KvBridgeProperties(
    @DefaultValue Connector connector,
    @DefaultValue("both") Role role,
    @DefaultValue("engine-0") String engineId,
    @DefaultValue Lease lease,
    @DefaultValue("5s") Duration replyTimeout,
    @DefaultValue Handshake handshake,
    @DefaultValue("fail") LoadFailurePolicy loadFailurePolicy) {

  private static final String PREFIX = "kvbridge.";

  /**
   * The settings of a connector for {@code engineId} in {@code role}, with every other value as
   * configured here and {@code connectorProperties} as the connector's own.
   *
   * @throws io.kvbridge.spi.InvalidSettingException naming the setting (under this prefix) of a
   *     value a connector cannot run with
   */
  public ConnectorSettings connectorSettings(
      String engineId,
      Role role,
      MonotonicClock clock,
      ConnectorObserver observer,
      ConnectorProperties connectorProperties) {
    return ConnectorSettings.builder(connector.type(), engineId)
        .role(role)
        .leaseTerms(lease.duration(), lease.maxLifetime())
        .heartbeatInterval(lease.heartbeatInterval())
        .safetyMargin(lease.safetyMargin())
        .acksRequired(lease.acksRequired())
        .replyTimeout(replyTimeout)
        .handshakeAddress(handshake.address())
        .handshakeTimeout(handshake.timeout())
        .clock(clock)
        .observer(observer)
        .properties(connectorProperties)
        .build();
  }

  /**
   * Which connector this application uses.
   *
   * @param type Connector type: the name a provider on the class path answers to, such as 'fake'
   *     (in-JVM, for tests and demos) or 'nixl'.
   */
  public record Connector(@DefaultValue("fake") String type) {}

  /**
   * Lease terms and the timers that keep leases alive.
   *
   * @param duration How long a producer keeps a request's blocks for the consumer after granting
   *     the lease, and how far each renewal extends it.
   * @param maxLifetime Hard limit, from grant, that no renewal may pass. At least 'duration'.
   * @param heartbeatInterval How often a consumer renews the leases it still means to read. Shorter
   *     than 'duration'.
   * @param sweepInterval How often expired leases are ended, even when the engine is idle.
   * @param safetyMargin A consumer does not start a read whose lease ends sooner than this. At
   *     least 0 and shorter than 'duration'.
   * @param acksRequired How many distinct consumers must acknowledge a read before the producer
   *     frees the blocks.
   */
  public record Lease(
      @DefaultValue("30s") Duration duration,
      @DefaultValue("2m") Duration maxLifetime,
      @DefaultValue("5s") Duration heartbeatInterval,
      @DefaultValue("1s") Duration sweepInterval,
      @DefaultValue("2s") Duration safetyMargin,
      @DefaultValue("1") int acksRequired) {

    /**
     * Checks the sweep interval, which only the starter reads; {@link ConnectorSettings} checks the
     * others.
     */
    public Lease {
      requirePositive("lease.sweep-interval", sweepInterval);
    }
  }

  /**
   * Handshakes between engines.
   *
   * @param address Where this engine answers handshakes: 'local' for engines in one JVM (or
   *     'local://name' to choose the name), or 'tcp://host:port' for separate processes
   *     ('tcp://0.0.0.0:0' picks a free port).
   * @param timeout How long a consumer waits for a producer's handshake answer.
   */
  public record Handshake(
      @DefaultValue("local") String address, @DefaultValue("5s") Duration timeout) {}

  private static void requireNonNull(String name, @Nullable Object value) {
    if (value == null) {
      throw new InvalidKvBridgePropertyException(PREFIX + name, PREFIX + name + " must be set");
    }
  }

  private static void requirePositive(String name, @Nullable Duration value) {
    requireNonNull(name, value);
    if (value.isNegative() || value.isZero()) {
      throw new InvalidKvBridgePropertyException(
          PREFIX + name,
          PREFIX + name + " (" + DurationText.of(value) + ") must be positive, e.g. 5s or 500ms");
    }
  }
}
