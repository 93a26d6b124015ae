package io.kvbridge.spring;

import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.spi.ConnectorProperties;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.LoadFailurePolicy;
import io.kvbridge.spi.PeerDirectory;
import io.kvbridge.spi.ReadStaging;
import io.kvbridge.spi.Role;
import io.kvbridge.time.DurationText;
import io.kvbridge.time.MonotonicClock;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

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
 * @param tpDegree How many tensor-parallel ranks the engine has, 1 to 255: one worker side, KV
 *     region and transport agent each.
 * @param lease How long producers hold blocks for consumers, and how both sides keep leases alive.
 * @param replyTimeout How long a consumer waits for the producer's ACK or NACK after a read before
 *     the load counts as failed.
 * @param progressInterval How often each connector's progress thread moves transfers along while
 *     any is in flight, so that answers and finished reads do not wait for the engine's next step:
 *     '0s' runs no thread, at most 100ms.
 * @param streaming When a producer streams a request's KV layer by layer while it computes.
 * @param handshake Where this engine answers handshakes, how long a consumer waits for one, and the
 *     deployment's shared secret.
 * @param consumer Limits a consumer keeps against slow or hostile producers.
 * @param loadFailurePolicy What the engine does with a request whose KV cache could not be loaded:
 *     'fail' (end it with an error) or 'recompute' (prefill it locally).
 * @param tracing Spans of each request's transfer path, joined across prefill and decode nodes.
 */
@ConfigurationProperties("kvbridge")
public record KvBridgeProperties(
    @DefaultValue Connector connector,
    @DefaultValue("both") Role role,
    @DefaultValue("engine-0") String engineId,
    @DefaultValue("1") int tpDegree,
    @DefaultValue Lease lease,
    @DefaultValue("5s") Duration replyTimeout,
    @DefaultValue("500us") Duration progressInterval,
    @DefaultValue Streaming streaming,
    @DefaultValue Handshake handshake,
    @DefaultValue Consumer consumer,
    @DefaultValue("fail") LoadFailurePolicy loadFailurePolicy,
    @DefaultValue Tracing tracing) {

  private static final String PREFIX = "kvbridge.";

  /**
   * The settings of a connector for {@code engineId} in {@code role} with {@code tpDegree}
   * tensor-parallel ranks that finds producers through {@code peerDirectory}, with every other
   * value as configured here and {@code connectorProperties} as the connector's own.
   *
   * @throws io.kvbridge.spi.InvalidSettingException naming the setting (under this prefix) of a
   *     value a connector cannot run with
   */
  public ConnectorSettings connectorSettings(
      String engineId,
      Role role,
      int tpDegree,
      PeerDirectory peerDirectory,
      MonotonicClock clock,
      ConnectorObserver observer,
      ConnectorProperties connectorProperties) {
    return ConnectorSettings.builder(connector.type(), engineId)
        .role(role)
        .tpDegree(tpDegree)
        .leaseTerms(lease.duration(), lease.maxLifetime())
        .heartbeatInterval(lease.heartbeatInterval())
        .safetyMargin(lease.safetyMargin())
        .acksRequired(lease.acksRequired())
        .replyTimeout(replyTimeout)
        .progressInterval(progressInterval)
        .streamingMinTokens(streaming.minTokens())
        .handshakeAddress(handshake.address())
        .handshakeTimeout(handshake.timeout())
        .handshakeSecret(handshake.secret())
        .maxLoadsPerProducer(consumer.maxLoadsPerProducer())
        .staging(new ReadStaging(consumer.staging(), consumer.stagingBytes().toBytes()))
        .peerDirectory(peerDirectory)
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
   * Layer-wise streaming: a producer engine that reports each layer it computes ({@code
   * requestStarted}, {@code layerSaved}) has the consumer read it while later layers still compute.
   *
   * @param minTokens The fewest prompt tokens a request needs to be streamed; a shorter one is
   *     leased once its prefill finished, so short prompts never pay per-layer overhead. At least
   *     1.
   */
  public record Streaming(@DefaultValue("128") int minTokens) {}

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
   * @param timeout How long a consumer's whole handshake with a producer may take, from connecting
   *     to the answer's last byte (connecting again included, when a flooded producer closed a
   *     connection before answering).
   * @param secret The deployment's shared secret, at least 16 bytes: when set (the same on every
   *     node), a producer proves it knows it before a consumer sends anything of its own, and the
   *     request and answer travel encrypted and authenticated; a peer that does not know it is
   *     refused. Unset: anyone who reaches the handshake port is trusted. Set it from the
   *     environment (KVBRIDGE_HANDSHAKE_SECRET) rather than a file; it is never logged or sent.
   */
  public record Handshake(
      @DefaultValue("local") String address,
      @DefaultValue("5s") Duration timeout,
      @Nullable String secret) {

    /** Never shows the secret. */
    @Override
    public String toString() {
      return "Handshake[address="
          + address
          + ", timeout="
          + timeout
          + ", secret="
          + (secret == null ? "unset" : "redacted")
          + "]";
    }
  }

  /**
   * What a consumer holds for producers at most, and how it reads between ranks that split a
   * token's heads differently.
   *
   * @param maxLoadsPerProducer How many loads from one producer a consumer holds at once (from
   *     accepting the parameters to the end of the read); more are refused at once, so one slow or
   *     hostile producer cannot take every block of the consumer.
   * @param staging How a consumer rank reads from a producer rank whose block-major memory splits a
   *     token's heads differently (different TP): 'auto' (read the producer's slabs whole into a
   *     staging area and copy each token's heads into place when the measured cost model finds it
   *     cheaper than a piece per token), 'always' or 'never'.
   * @param stagingBytes The staging area of each consumer rank, allocated from its transport at the
   *     first staged read, at least 32MB: a read larger than it is staged in waves, each stage
   *     waiting for the room earlier stages give back once copied into place.
   */
  public record Consumer(
      @DefaultValue("1024") int maxLoadsPerProducer,
      @DefaultValue("auto") ReadStaging.Mode staging,
      @DefaultValue("512MB") DataSize stagingBytes) {}

  /**
   * Tracing of transfers.
   *
   * @param enabled Whether connectors open spans for each request's transfer path (the prefill
   *     node's lease, the decode node's load and its phases) through the application's Micrometer
   *     Tracer, and carry the trace from prefill to decode node in the transfer parameters as W3C
   *     'traceparent'. Needs a tracer bridge (e.g. micrometer-tracing-bridge-otel); off by default,
   *     when connectors record no span and add no field.
   */
  public record Tracing(@DefaultValue("false") boolean enabled) {}

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
