package io.kvbridge.spi;

import io.kvbridge.lease.InvalidLeaseTermsException;
import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.net.HandshakeAddress;
import io.kvbridge.net.HandshakeSecret;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.observe.TransferTracer;
import io.kvbridge.time.DurationText;
import io.kvbridge.time.MonotonicClock;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Everything a provider needs to create a connector for one engine. Every value is checked here,
 * once: a value kvbridge cannot run with is refused with an {@link InvalidSettingException} whose
 * {@link InvalidSettingException#setting() setting} is the name it is configured by, shown in
 * brackets below.
 *
 * @param type the connector type, e.g. {@code fake} ({@code connector.type})
 * @param engineId this engine's identity in handshakes; unique in the deployment ({@code
 *     engine-id})
 * @param role what this engine does ({@code role})
 * @param tpDegree how many tensor-parallel ranks the engine has, 1 to 255: one worker side, KV
 *     memory and transport agent each ({@code tp-degree})
 * @param leaseTerms lease duration and maximum lifetime of a producer's leases ({@code
 *     lease.duration}, {@code lease.max-lifetime})
 * @param heartbeatInterval how often a consumer renews the leases it still means to read; shorter
 *     than the lease duration ({@code lease.heartbeat-interval})
 * @param safetyMargin a consumer does not start a read whose lease ends sooner than this; at least
 *     0 and shorter than the lease duration ({@code lease.safety-margin})
 * @param replyTimeout how long a consumer waits for P's ACK/NACK after a read ({@code
 *     reply-timeout})
 * @param handshakeTimeout how long a consumer waits for a producer's handshake answer ({@code
 *     handshake.timeout})
 * @param progressInterval how often the connector's progress thread moves transfers along while any
 *     is in flight: it answers CONFIRM, COMPLETION and heartbeats on P, and posts reads, sends
 *     COMPLETION and takes ACK on D, as they arrive instead of at the engine's next step; {@link
 *     Duration#ZERO} runs no thread (everything waits for steps and sweeps); at most {@value
 *     #MAX_PROGRESS_INTERVAL_MILLIS} ms ({@code progress-interval})
 * @param streamingMinTokens a producer streams the lease of a request whose prompt holds at least
 *     this many tokens ({@link SchedulerSide#requestStarted}); a shorter one is leased once its
 *     prefill finished, so short prompts never pay per-layer overhead; at least 1 ({@code
 *     streaming.min-tokens})
 * @param handshakeAddress where this engine answers handshakes: in this JVM or on a TCP host and
 *     port, port 0 picking a free one ({@code handshake.address})
 * @param acksRequired how many distinct consumers must acknowledge a lease ({@code
 *     lease.acks-required})
 * @param maxLoadsPerProducer how many loads from one producer a consumer holds at once; more are
 *     refused at once, so one slow or hostile producer cannot take every block of the consumer
 *     ({@code consumer.max-loads-per-producer})
 * @param staging how a consumer reads between ranks that split a token's heads differently ({@code
 *     consumer.staging}, {@code consumer.staging-bytes})
 * @param handshakeSecret the deployment's shared secret: when present, both ends of every handshake
 *     prove they know it before anything else is exchanged; never logged ({@code handshake.secret})
 * @param incarnation drawn afresh at every start of the engine ({@link #drawIncarnation()}), so
 *     peers tell a restarted engine from its former self, and its later starts from earlier ones
 * @param peerDirectory where a consumer finds a producer's handshake address when transfer
 *     parameters omit it
 * @param clock the monotonic clock leases and timeouts use
 * @param observer receives events for metrics
 * @param tracer opens the spans of each request's transfer path; {@link TransferTracer#NONE} (the
 *     default) records nothing
 * @param properties connector-specific settings, e.g. {@code nixl.memory}, read by the type's
 *     {@link TransportProvider}
 */
public record ConnectorSettings(
    String type,
    String engineId,
    Role role,
    int tpDegree,
    LeaseTerms leaseTerms,
    Duration heartbeatInterval,
    Duration safetyMargin,
    Duration replyTimeout,
    Duration handshakeTimeout,
    Duration progressInterval,
    int streamingMinTokens,
    HandshakeAddress handshakeAddress,
    int acksRequired,
    int maxLoadsPerProducer,
    ReadStaging staging,
    Optional<HandshakeSecret> handshakeSecret,
    long incarnation,
    PeerDirectory peerDirectory,
    MonotonicClock clock,
    ConnectorObserver observer,
    TransferTracer tracer,
    ConnectorProperties properties) {

  /**
   * Checks every value.
   *
   * @throws InvalidSettingException naming the setting, its value and what is accepted
   */
  public ConnectorSettings {
    if (type == null || type.isBlank()) {
      throw new InvalidSettingException(
          "connector.type", "must not be blank; set it to a connector type such as fake");
    }
    if (engineId == null || engineId.isBlank()) {
      throw new InvalidSettingException(
          "engine-id", "must not be blank; set it to this engine's unique name");
    }
    requireSet("role", role);
    if (tpDegree < 1 || tpDegree > 255) {
      throw new InvalidSettingException("tp-degree", "(" + tpDegree + ") must be 1 to 255");
    }
    requireSet("lease.duration", leaseTerms);
    requirePositive("lease.heartbeat-interval", heartbeatInterval);
    if (heartbeatInterval.compareTo(leaseTerms.duration()) >= 0) {
      throw new InvalidSettingException(
          "lease.heartbeat-interval",
          "("
              + DurationText.of(heartbeatInterval)
              + ") must be shorter than the lease duration ("
              + DurationText.of(leaseTerms.duration())
              + "), or leases expire between heartbeats");
    }
    requireSet("lease.safety-margin", safetyMargin);
    if (safetyMargin.isNegative() || safetyMargin.compareTo(leaseTerms.duration()) >= 0) {
      throw new InvalidSettingException(
          "lease.safety-margin",
          "("
              + DurationText.of(safetyMargin)
              + ") must be at least 0s and shorter than the lease duration ("
              + DurationText.of(leaseTerms.duration())
              + ")");
    }
    if (acksRequired < 1) {
      throw new InvalidSettingException(
          "lease.acks-required", "(" + acksRequired + ") must be at least 1");
    }
    if (maxLoadsPerProducer < 1) {
      throw new InvalidSettingException(
          "consumer.max-loads-per-producer", "(" + maxLoadsPerProducer + ") must be at least 1");
    }
    requireSet("consumer.staging", staging);
    requireSet("handshake.secret", handshakeSecret);
    Objects.requireNonNull(peerDirectory, "peerDirectory");
    requirePositive("reply-timeout", replyTimeout);
    requirePositive("handshake.timeout", handshakeTimeout);
    requireSet("progress-interval", progressInterval);
    if (progressInterval.isNegative()
        || progressInterval.compareTo(Duration.ofMillis(MAX_PROGRESS_INTERVAL_MILLIS)) > 0) {
      throw new InvalidSettingException(
          "progress-interval",
          "("
              + DurationText.of(progressInterval)
              + ") must be 0s (no progress thread) to "
              + MAX_PROGRESS_INTERVAL_MILLIS
              + "ms, e.g. 500us");
    }
    if (streamingMinTokens < 1) {
      throw new InvalidSettingException(
          "streaming.min-tokens",
          "(" + streamingMinTokens + ") must be at least 1, e.g. " + DEFAULT_STREAMING_MIN_TOKENS);
    }
    requireSet("handshake.address", handshakeAddress);
    Objects.requireNonNull(clock, "clock");
    Objects.requireNonNull(observer, "observer");
    Objects.requireNonNull(tracer, "tracer");
    Objects.requireNonNull(properties, "properties");
  }

  /** The longest {@link #progressInterval()}: longer waits are what sweeps are for. */
  public static final long MAX_PROGRESS_INTERVAL_MILLIS = 100;

  /** The default {@link #progressInterval()}. */
  public static final Duration DEFAULT_PROGRESS_INTERVAL = Duration.ofNanos(500_000);

  /**
   * The default {@link #streamingMinTokens()}, from the time-to-first-token benchmark
   * (BENCHMARKS.md, "Time to first token"): there, with Llama-3.1-8B's KV on either connector,
   * streaming was faster than the whole-request path at every prompt length measured, down to 32
   * tokens. Below 128 tokens (16 MiB of an 8B model's KV, read in milliseconds) streaming can win
   * at most that read, while an engine's own cost per reported layer, which the benchmark does not
   * model, weighs most: those prompts keep the whole-request path.
   */
  public static final int DEFAULT_STREAMING_MIN_TOKENS = 128;

  private static final SecureRandom RANDOM = new SecureRandom();

  // The last incarnation drawn in this JVM: two starts of one engine id within one millisecond (a
  // test's restart) still draw in order.
  private static final AtomicLong LAST_INCARNATION = new AtomicLong();

  /**
   * A new incarnation for a start of an engine now: the wall clock's epoch milliseconds shifted
   * left by 16 bits, the low 16 bits random, as an unsigned 64-bit value. A later start of a node
   * draws a greater one (compared unsigned), as long as the node's wall clock did not step back by
   * more than the time it was down; within one JVM every draw is greater than the one before.
   */
  public static long drawIncarnation() {
    long drawn = incarnation(System.currentTimeMillis(), RANDOM.nextInt(1 << 16));
    return LAST_INCARNATION.accumulateAndGet(
        drawn, (last, next) -> Long.compareUnsigned(next, last) > 0 ? next : last + 1);
  }

  /**
   * The incarnation drawn at {@code epochMillis} with {@code randomBits} (their low 16 bits).
   *
   * @throws IllegalArgumentException if {@code epochMillis} is negative or does not fit 48 bits
   */
  public static long incarnation(long epochMillis, int randomBits) {
    if (epochMillis < 0 || epochMillis >= 1L << 48) {
      throw new IllegalArgumentException(
          "epoch milliseconds " + epochMillis + " do not fit an incarnation's 48 bits");
    }
    return (epochMillis << 16) | (randomBits & 0xFFFF);
  }

  /**
   * Whether incarnation {@code candidate} is of a later start than {@code known}: their unsigned
   * order.
   */
  public static boolean isLaterIncarnation(long candidate, long known) {
    return Long.compareUnsigned(candidate, known) > 0;
  }

  /** Starts a builder with the defaults for {@code engineId}. */
  public static Builder builder(String type, String engineId) {
    return new Builder(type, engineId);
  }

  /** A copy of these settings with another observer (the starter adds its metrics this way). */
  public ConnectorSettings withObserver(ConnectorObserver newObserver) {
    return with(newObserver, tracer);
  }

  /** A copy of these settings with another tracer (the starter adds its tracing this way). */
  public ConnectorSettings withTracer(TransferTracer newTracer) {
    return with(observer, newTracer);
  }

  private ConnectorSettings with(ConnectorObserver newObserver, TransferTracer newTracer) {
    return new ConnectorSettings(
        type,
        engineId,
        role,
        tpDegree,
        leaseTerms,
        heartbeatInterval,
        safetyMargin,
        replyTimeout,
        handshakeTimeout,
        progressInterval,
        streamingMinTokens,
        handshakeAddress,
        acksRequired,
        maxLoadsPerProducer,
        staging,
        handshakeSecret,
        incarnation,
        peerDirectory,
        clock,
        newObserver,
        newTracer,
        properties);
  }

  private static void requireSet(String setting, Object value) {
    if (value == null) {
      throw new InvalidSettingException(setting, "must be set");
    }
  }

  private static void requirePositive(String setting, Duration value) {
    requireSet(setting, value);
    if (value.isNegative() || value.isZero()) {
      throw new InvalidSettingException(
          setting, "(" + DurationText.of(value) + ") must be positive, e.g. 5s or 500ms");
    }
  }

  /**
   * Builds {@link ConnectorSettings}; defaults follow common P/D deployments. Values are checked
   * when {@link #build()} is called.
   */
  public static final class Builder {
    private final String type;
    private final String engineId;
    private Role role = Role.BOTH;
    private int tpDegree = 1;
    private Duration leaseDuration = Duration.ofSeconds(30);
    private Duration leaseMaxLifetime = Duration.ofMinutes(2);
    private Duration heartbeatInterval = Duration.ofSeconds(5);
    private Duration safetyMargin = Duration.ofSeconds(2);
    private Duration replyTimeout = Duration.ofSeconds(5);
    private Duration handshakeTimeout = Duration.ofSeconds(5);
    private Duration progressInterval = DEFAULT_PROGRESS_INTERVAL;
    private int streamingMinTokens = DEFAULT_STREAMING_MIN_TOKENS;
    private String handshakeAddress = "local";
    private int acksRequired = 1;
    private int maxLoadsPerProducer = 1024;
    private ReadStaging staging = ReadStaging.DEFAULT;
    private Optional<HandshakeSecret> handshakeSecret = Optional.empty();
    private long incarnation = drawIncarnation();
    private PeerDirectory peerDirectory = PeerDirectory.NONE;
    private MonotonicClock clock = MonotonicClock.SYSTEM;
    private ConnectorObserver observer = ConnectorObserver.NONE;
    private TransferTracer tracer = TransferTracer.NONE;
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

    /** Sets how many tensor-parallel ranks the engine has. */
    public Builder tpDegree(int value) {
      this.tpDegree = value;
      return this;
    }

    /** Sets lease duration and maximum lifetime. */
    public Builder leaseTerms(LeaseTerms value) {
      return leaseTerms(value.duration(), value.maxLifetime());
    }

    /**
     * Sets lease duration and maximum lifetime as configured; {@link #build()} checks them as
     * {@code lease.duration} and {@code lease.max-lifetime}.
     */
    public Builder leaseTerms(Duration duration, Duration maxLifetime) {
      this.leaseDuration = duration;
      this.leaseMaxLifetime = maxLifetime;
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
     * Sets how often the progress thread moves transfers along while any is in flight; {@link
     * Duration#ZERO} for no thread.
     */
    public Builder progressInterval(Duration value) {
      this.progressInterval = value;
      return this;
    }

    /** Sets the fewest prompt tokens whose lease a producer streams. */
    public Builder streamingMinTokens(int value) {
      this.streamingMinTokens = value;
      return this;
    }

    /**
     * Sets the handshake address, written {@code local}, {@code local://name} or {@code
     * tcp://host:port}; {@link #build()} parses it.
     */
    public Builder handshakeAddress(String value) {
      this.handshakeAddress = value;
      return this;
    }

    /** Sets the handshake address. */
    public Builder handshakeAddress(HandshakeAddress value) {
      return handshakeAddress(value.toString());
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

    /** Sets the deployment's handshake secret; {@code null} for none. */
    public Builder handshakeSecret(HandshakeSecret value) {
      this.handshakeSecret = Optional.ofNullable(value);
      return this;
    }

    /**
     * Sets the deployment's handshake secret from its text (at least {@value
     * HandshakeSecret#MIN_BYTES} bytes of UTF-8); {@code null} or empty for none.
     *
     * @throws InvalidSettingException naming {@code handshake.secret}, never quoting it
     */
    public Builder handshakeSecret(String text) {
      if (text == null || text.isEmpty()) {
        return handshakeSecret((HandshakeSecret) null);
      }
      int length = text.getBytes(StandardCharsets.UTF_8).length;
      if (length < HandshakeSecret.MIN_BYTES) {
        throw new InvalidSettingException(
            "handshake.secret",
            "must be at least "
                + HandshakeSecret.MIN_BYTES
                + " bytes of UTF-8, got "
                + length
                + " (the value is not shown)");
      }
      return handshakeSecret(HandshakeSecret.of(text));
    }

    /**
     * Sets the incarnation ({@link #drawIncarnation()} draws one otherwise: set it only in tests).
     */
    public Builder incarnation(long value) {
      this.incarnation = value;
      return this;
    }

    /** Sets where a consumer finds producers that transfer parameters do not locate. */
    public Builder peerDirectory(PeerDirectory value) {
      this.peerDirectory = value;
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

    /** Sets the tracer. */
    public Builder tracer(TransferTracer value) {
      this.tracer = value;
      return this;
    }

    /** Sets how a consumer reads between ranks that split heads differently. */
    public Builder staging(ReadStaging value) {
      this.staging = value;
      return this;
    }

    /** Sets connector-specific properties. */
    public Builder properties(Map<String, String> value) {
      return properties(ConnectorProperties.of(value));
    }

    /** Sets connector-specific properties. */
    public Builder properties(ConnectorProperties value) {
      this.properties = value;
      return this;
    }

    /**
     * Checks and builds.
     *
     * @throws InvalidSettingException naming the first setting that holds a value kvbridge cannot
     *     run with
     */
    public ConnectorSettings build() {
      return new ConnectorSettings(
          type,
          engineId,
          role,
          tpDegree,
          leaseTerms(),
          heartbeatInterval,
          safetyMargin,
          replyTimeout,
          handshakeTimeout,
          progressInterval,
          streamingMinTokens,
          handshakeAddress(),
          acksRequired,
          maxLoadsPerProducer,
          staging,
          handshakeSecret,
          incarnation,
          peerDirectory,
          clock,
          observer,
          tracer,
          properties);
    }

    private LeaseTerms leaseTerms() {
      requireSet("lease.duration", leaseDuration);
      requireSet("lease.max-lifetime", leaseMaxLifetime);
      try {
        return new LeaseTerms(leaseDuration, leaseMaxLifetime);
      } catch (InvalidLeaseTermsException e) {
        String setting =
            switch (e.term()) {
              case DURATION -> "lease.duration";
              case MAX_LIFETIME -> "lease.max-lifetime";
            };
        throw new InvalidSettingException(setting, e.problem(), e);
      }
    }

    private HandshakeAddress handshakeAddress() {
      requireSet("handshake.address", handshakeAddress);
      try {
        return HandshakeAddress.parse(handshakeAddress);
      } catch (IllegalArgumentException e) {
        throw new InvalidSettingException("handshake.address", e.getMessage(), e);
      }
    }
  }
}
