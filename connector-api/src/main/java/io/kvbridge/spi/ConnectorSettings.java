package io.kvbridge.spi;

import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.time.MonotonicClock;
import io.kvbridge.wire.HandshakeSecret;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

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
 * @param handshakeAddress where this engine answers handshakes: {@code local} (same JVM) or {@code
 *     tcp://host:port} (port 0 picks a free one)
 * @param acksRequired how many distinct consumers must acknowledge a lease (producer)
 * @param maxLoadsPerProducer how many loads from one producer a consumer holds at once; more are
 *     refused at once, so one slow or hostile producer cannot take every block of the consumer
 * @param handshakeSecret the deployment's shared secret: when present, both ends of every handshake
 *     prove they know it before anything else is exchanged; never logged
 * @param incarnation drawn afresh at every start of the engine, so peers tell a restarted engine
 *     from its former self
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
    String handshakeAddress,
    int acksRequired,
    int maxLoadsPerProducer,
    Optional<HandshakeSecret> handshakeSecret,
    long incarnation,
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
    if (maxLoadsPerProducer < 1) {
      throw new IllegalArgumentException(
          "maxLoadsPerProducer must be at least 1, got " + maxLoadsPerProducer);
    }
    Objects.requireNonNull(handshakeSecret, "handshakeSecret");
  }

  private static final SecureRandom RANDOM = new SecureRandom();

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
        maxLoadsPerProducer,
        handshakeSecret,
        incarnation,
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
    private int maxLoadsPerProducer = 1024;
    private Optional<HandshakeSecret> handshakeSecret = Optional.empty();
    private long incarnation = RANDOM.nextLong();
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

    /** Sets the handshake address. */
    public Builder handshakeAddress(String value) {
      this.handshakeAddress = value;
      return this;
    }

    /** Sets how many consumers must acknowledge each lease. */
    public Builder acksRequired(int value) {
      this.acksRequired = value;
      return this;
    }

    /** Sets how many loads from one producer a consumer holds at once. */
    public Builder maxLoadsPerProducer(int value) {
      this.maxLoadsPerProducer = value;
      return this;
    }

    /** Sets the deployment's handshake secret; {@code null} or empty for none. */
    public Builder handshakeSecret(HandshakeSecret value) {
      this.handshakeSecret = Optional.ofNullable(value);
      return this;
    }

    /** Sets the incarnation (a random one is drawn otherwise: set it only in tests). */
    public Builder incarnation(long value) {
      this.incarnation = value;
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
          handshakeAddress,
          acksRequired,
          maxLoadsPerProducer,
          handshakeSecret,
          incarnation,
          clock,
          observer,
          properties);
    }
  }
}
