package io.kvbridge.spi;

import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.time.MonotonicClock;
import io.kvbridge.wire.HandshakeAddress;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * Everything a provider needs to create a connector for one engine.
 *
 * @param type the connector type, e.g. {@code fake}
 * @param engineId this engine's identity in handshakes; unique in the deployment
 * @param role what this engine does
 * @param leaseTerms lease duration and maximum lifetime (producer)
 * @param heartbeatInterval how often a consumer renews the leases it still means to read
 * @param safetyMargin a consumer does not start a read whose lease ends sooner than this
 * @param replyTimeout how long a consumer waits for P's ACK/NACK after a read
 * @param handshakeTimeout how long a consumer waits for a producer's handshake answer
 * @param handshakeAddress where this engine answers handshakes: in this JVM or on a TCP host and
 *     port (port 0 picks a free one)
 * @param acksRequired how many distinct consumers must acknowledge a lease (producer)
 * @param clock the monotonic clock leases and timeouts use
 * @param observer receives events for metrics
 * @param properties connector-specific settings, e.g. {@code nixl.memory}, read by the type's
 *     {@link TransportProvider}
 */
public record ConnectorSettings(
    String type,
    String engineId,
    Role role,
    LeaseTerms leaseTerms,
    Duration heartbeatInterval,
    Duration safetyMargin,
    Duration replyTimeout,
    Duration handshakeTimeout,
    HandshakeAddress handshakeAddress,
    int acksRequired,
    MonotonicClock clock,
    ConnectorObserver observer,
    ConnectorProperties properties) {

  /** Checks every value; messages name the setting. */
  public ConnectorSettings {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(engineId, "engineId");
    Objects.requireNonNull(role, "role");
    Objects.requireNonNull(leaseTerms, "leaseTerms");
    Objects.requireNonNull(handshakeAddress, "handshakeAddress");
    Objects.requireNonNull(clock, "clock");
    Objects.requireNonNull(observer, "observer");
    Objects.requireNonNull(properties, "properties");
    if (engineId.isBlank()) {
      throw new IllegalArgumentException("engineId must not be blank");
    }
    requirePositive("heartbeatInterval", heartbeatInterval);
    requirePositive("replyTimeout", replyTimeout);
    requirePositive("handshakeTimeout", handshakeTimeout);
    if (safetyMargin.isNegative() || safetyMargin.compareTo(leaseTerms.duration()) >= 0) {
      throw new IllegalArgumentException(
          "safetyMargin must be at least 0 and below the lease duration, got " + safetyMargin);
    }
    if (acksRequired < 1) {
      throw new IllegalArgumentException("acksRequired must be at least 1, got " + acksRequired);
    }
  }

  /** Starts a builder with the defaults for {@code engineId}. */
  public static Builder builder(String type, String engineId) {
    return new Builder(type, engineId);
  }

  /** A copy of these settings with another observer (the starter adds its metrics this way). */
  public ConnectorSettings withObserver(ConnectorObserver newObserver) {
    return new ConnectorSettings(
        type,
        engineId,
        role,
        leaseTerms,
        heartbeatInterval,
        safetyMargin,
        replyTimeout,
        handshakeTimeout,
        handshakeAddress,
        acksRequired,
        clock,
        newObserver,
        properties);
  }

  private static void requirePositive(String name, Duration value) {
    Objects.requireNonNull(value, name);
    if (value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " must be positive, got " + value);
    }
  }

  /** Builds {@link ConnectorSettings}; defaults follow common P/D deployments. */
  public static final class Builder {
    private final String type;
    private final String engineId;
    private Role role = Role.BOTH;
    private LeaseTerms leaseTerms = new LeaseTerms(Duration.ofSeconds(30), Duration.ofMinutes(2));
    private Duration heartbeatInterval = Duration.ofSeconds(5);
    private Duration safetyMargin = Duration.ofSeconds(2);
    private Duration replyTimeout = Duration.ofSeconds(5);
    private Duration handshakeTimeout = Duration.ofSeconds(5);
    private String handshakeAddress = "local";
    private int acksRequired = 1;
    private MonotonicClock clock = MonotonicClock.SYSTEM;
    private ConnectorObserver observer = ConnectorObserver.NONE;
    private ConnectorProperties properties = ConnectorProperties.EMPTY;

    private Builder(String type, String engineId) {
      this.type = type;
      this.engineId = engineId;
    }

    /** Sets the role. */
    public Builder role(Role value) {
      this.role = value;
      return this;
    }

    /** Sets lease duration and maximum lifetime. */
    public Builder leaseTerms(LeaseTerms value) {
      this.leaseTerms = value;
      return this;
    }

    /** Sets the heartbeat interval. */
    public Builder heartbeatInterval(Duration value) {
      this.heartbeatInterval = value;
      return this;
    }

    /** Sets the safety margin. */
    public Builder safetyMargin(Duration value) {
      this.safetyMargin = value;
      return this;
    }

    /** Sets the reply timeout. */
    public Builder replyTimeout(Duration value) {
      this.replyTimeout = value;
      return this;
    }

    /** Sets the handshake timeout. */
    public Builder handshakeTimeout(Duration value) {
      this.handshakeTimeout = value;
      return this;
    }

    /**
     * Sets the handshake address, written {@code local}, {@code local://name} or {@code
     * tcp://host:port}; checked when the settings are built.
     */
    public Builder handshakeAddress(String value) {
      this.handshakeAddress = value;
      return this;
    }

    /** Sets the handshake address. */
    public Builder handshakeAddress(HandshakeAddress value) {
      this.handshakeAddress = value.toString();
      return this;
    }

    /** Sets how many consumers must acknowledge each lease. */
    public Builder acksRequired(int value) {
      this.acksRequired = value;
      return this;
    }

    /** Sets the clock. */
    public Builder clock(MonotonicClock value) {
      this.clock = value;
      return this;
    }

    /** Sets the observer. */
    public Builder observer(ConnectorObserver value) {
      this.observer = value;
      return this;
    }

    /** Sets connector-specific properties. */
    public Builder properties(Map<String, String> value) {
      this.properties = ConnectorProperties.of(value);
      return this;
    }

    /** Checks and builds. */
    public ConnectorSettings build() {
      return new ConnectorSettings(
          type,
          engineId,
          role,
          leaseTerms,
          heartbeatInterval,
          safetyMargin,
          replyTimeout,
          handshakeTimeout,
          HandshakeAddress.parse(handshakeAddress),
          acksRequired,
          clock,
          observer,
          properties);
    }
  }
}
