package io.kvbridge.spring;

import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.LoadFailurePolicy;
import io.kvbridge.spi.Role;
import io.kvbridge.time.DurationText;
import io.kvbridge.time.MonotonicClock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Configuration of kvbridge, under the prefix {@code kvbridge}. The values a connector runs with
 * are checked by {@link ConnectorSettings} when the connectors are set up, and the values only the
 * starter reads are checked here when they are bound: either way an invalid one stops start-up with
 * an {@link InvalidKvBridgePropertyException} that names the property and what it accepts.
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
 * @param nixl Settings of the 'nixl' connector.
 * @param properties Further connector-specific settings, passed to the connector as they are. For
 *     instance 'kvbridge.properties.fake.fabric=demo' reaches the connector as 'fake.fabric'.
 */
@ConfigurationProperties("kvbridge")
public record KvBridgeProperties(
    @DefaultValue Connector connector,
    @DefaultValue("both") Role role,
    @DefaultValue("engine-0") String engineId,
    @DefaultValue Lease lease,
    @DefaultValue("5s") Duration replyTimeout,
    @DefaultValue Handshake handshake,
    @DefaultValue("fail") LoadFailurePolicy loadFailurePolicy,
    @DefaultValue Nixl nixl,
    Map<String, String> properties) {

  private static final String PREFIX = "kvbridge.";

  /** Checks that free-form properties do not repeat typed ones. */
  public KvBridgeProperties {
    properties = properties == null ? Map.of() : Map.copyOf(properties);
    for (String key : properties.keySet()) {
      if (nixl.entries().containsKey(key)) {
        throw new InvalidKvBridgePropertyException(
            PREFIX + "properties." + key,
            PREFIX
                + "properties."
                + key
                + " duplicates "
                + PREFIX
                + key
                + "; set it there instead");
      }
    }
  }

  /**
   * The connector-specific settings handed to the connector ({@link
   * ConnectorSettings#properties()}): the {@code nixl.*} group under keys such as {@code
   * nixl.memory}, then every entry of {@link #properties()}.
   */
  public Map<String, String> connectorProperties() {
    Map<String, String> all = new LinkedHashMap<>(nixl.entries());
    all.putAll(properties);
    return Map.copyOf(all);
  }

  /**
   * The settings of a connector for {@code engineId} in {@code role}, with every other value as
   * configured here.
   */
  public ConnectorSettings connectorSettings(
      String engineId, Role role, MonotonicClock clock, ConnectorObserver observer) {
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
        .properties(connectorProperties())
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

  /**
   * Settings of the {@code nixl} connector, handed to it as {@code nixl.*} entries of {@link
   * ConnectorSettings#properties()}.
   *
   * @param backends NIXL backends to create, in order of preference, such as 'UCX'.
   * @param memory Memory the KV cache lives in: 'vram' (GPU), 'dram' (host), or 'auto' (GPU when a
   *     usable device is found, host otherwise).
   * @param pluginDir Directory NIXL loads its backend plugins from. NIXL's default when unset.
   * @param home NIXL installation whose native libraries are loaded. The class path's when unset.
   */
  public record Nixl(
      @DefaultValue("UCX") List<String> backends,
      @DefaultValue("auto") Memory memory,
      @Nullable Path pluginDir,
      @Nullable Path home) {

    /** Checks the backend list. */
    public Nixl {
      requireNonNull("nixl.memory", memory);
      if (backends == null
          || backends.isEmpty()
          || backends.stream().anyMatch(b -> b == null || b.isBlank())) {
        throw new InvalidKvBridgePropertyException(
            PREFIX + "nixl.backends",
            PREFIX
                + "nixl.backends "
                + backends
                + " must name at least one backend and no blank one, e.g. UCX");
      }
      backends = List.copyOf(backends);
    }

    /** This group as connector properties: {@code nixl.backends}, {@code nixl.memory}, ... */
    Map<String, String> entries() {
      Map<String, String> entries = new LinkedHashMap<>();
      entries.put("nixl.backends", String.join(",", backends));
      entries.put("nixl.memory", memory.name().toLowerCase(Locale.ROOT));
      if (pluginDir != null) {
        entries.put("nixl.plugin-dir", pluginDir.toString());
      }
      if (home != null) {
        entries.put("nixl.home", home.toString());
      }
      return entries;
    }

    /** Where the KV cache lives. */
    public enum Memory {
      /** GPU memory when a usable device is found, host memory otherwise. */
      AUTO,
      /** GPU device memory. */
      VRAM,
      /** Host memory. */
      DRAM
    }
  }

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
