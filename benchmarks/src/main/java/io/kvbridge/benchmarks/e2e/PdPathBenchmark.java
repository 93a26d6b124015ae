package io.kvbridge.benchmarks.e2e;

import io.kvbridge.benchmarks.BenchConnectors;
import io.kvbridge.benchmarks.JsonLines;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.sample.engine.Engine;
import io.kvbridge.sample.engine.EngineFactory;
import io.kvbridge.sample.engine.EngineRequest;
import io.kvbridge.sample.engine.EngineShape;
import io.kvbridge.sample.engine.Generation;
import io.kvbridge.sample.engine.ToyModel;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.LoadFailurePolicy;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TransferParams;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The sample app's prefill/decode path, in process, on its engine API: a prefill engine and a
 * decode engine, each with its own connector, with the engine settings below. One request in
 * flight; sampled, so the report can give percentiles. The {@code nixl} connector needs {@code
 * -Dkvbridge.nixl.home} and loopback UCX transports, as {@code benchmarks/run.sh} gives it.
 *
 * <p>Beside JMH's times, each trial appends to the file {@value #FIGURES} names (a system property)
 * what the decode connector measured of each load: the CONFIRM's round trip, the time from the READ
 * posted to P's ACK, and the decode engine's steps per load (from the request's arrival to the step
 * that reported it received, both included).
 *
 * <p>{@link #prefillThenDecode()} does what the sample's router does: the prefill engine computes
 * the prompt with {@code max_tokens=1} under a lease, then the decode engine loads the prompt's
 * blocks, the partly filled last one included, through the connector and generates. {@link
 * #colocated()} is the baseline: the decode engine computes the prompt itself and generates.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g", "--enable-native-access=ALL-UNNAMED"})
public class PdPathBenchmark {

  /**
   * 4096 blocks of 16 tokens, 64 bytes of KV per token as one opaque head, one rank and no prefix
   * cache: every decode loads the whole prompt, so the benchmark measures the transfer path.
   */
  private static final EngineShape SHAPE =
      EngineShape.of(KvLayout.opaque(ToyModel.NAME + ", 64 bytes per token", 16, 64, 4096));

  /**
   * The engines' step interval: a real engine steps every 10 to 50 ms while it decodes, and an
   * exchange that waits for a step costs that much.
   */
  private static final Duration STEP = Duration.ofMillis(10);

  /** The system property naming the JSON-lines file the figures of each trial are appended to. */
  static final String FIGURES = "kvbridge.bench.pd-path";

  /** The sample app's default demo completion length. */
  private static final int MAX_TOKENS = 24;

  /** What the sample's router asks of the prefill engine: compute the prompt, one token. */
  private static final int PREFILL_MAX_TOKENS = 1;

  /** 1,024 bytes of prompt: 64 full blocks to move. */
  private static final String PROMPT =
      "disaggregated serving splits prefill and decode across nodes so each can scale on its own "
          .repeat(12)
          .substring(0, 1024);

  private static final long TIMEOUT_SECONDS = 30;

  /**
   * The settings above, by name, for the report: see {@link io.kvbridge.benchmarks.RunSettings}.
   */
  public static Map<String, Number> settings() {
    int promptTokens = PROMPT.getBytes(StandardCharsets.UTF_8).length;
    return Map.of(
        "blocks",
        SHAPE.blockCount(),
        "tokensPerBlock",
        SHAPE.tokensPerBlock(),
        "bytesPerToken",
        SHAPE.bytesPerToken(),
        "stepMillis",
        STEP.toMillis(),
        "promptTokens",
        promptTokens,
        "promptFullBlocks",
        promptTokens / SHAPE.tokensPerBlock(),
        "generatedTokens",
        MAX_TOKENS,
        "prefillMaxTokens",
        PREFILL_MAX_TOKENS);
  }

  /**
   * The connector both engines use: {@code fake}, or {@code nixl} with host memory (needs the NIXL
   * libraries, as for {@link io.kvbridge.benchmarks.transfer.NixlReadBenchmark}).
   */
  @Param({"fake", "nixl"})
  public String connector;

  private Engine prefill;
  private Engine decode;
  private long next;
  private final LongAdder confirmNanos = new LongAdder();
  private final LongAdder confirms = new LongAdder();
  private final LongAdder readToAckNanos = new LongAdder();
  private final LongAdder loads = new LongAdder();
  private final LongAdder decodeSteps = new LongAdder();
  private final LongAdder decodes = new LongAdder();

  /** Starts both engines, each with its own connector of the chosen type. */
  @Setup(Level.Trial)
  public void start() {
    String deployment = "bench-" + UUID.randomUUID();
    EngineFactory factory = new EngineFactory(LoadFailurePolicy.FAIL, STEP);
    ConnectorObserver loadTimes =
        new ConnectorObserver() {
          @Override
          public void leaseConfirmed(String requestId, long nanos) {
            confirmNanos.add(nanos);
            confirms.increment();
          }

          @Override
          public void transferCompleted(String requestId, long bytes, long nanos) {
            readToAckNanos.add(nanos);
            loads.increment();
          }
        };
    prefill =
        factory.start(
            connector(deployment, "prefill", Role.PRODUCER, ConnectorObserver.NONE), SHAPE);
    decode = factory.start(connector(deployment, "decode", Role.CONSUMER, loadTimes), SHAPE);
  }

  /** Stops both engines and records the trial's figures. */
  @TearDown(Level.Trial)
  public void stop() {
    decode.close();
    prefill.close();
    recordFigures();
  }

  private void recordFigures() {
    if (decodes.sum() == 0) {
      return;
    }
    String line =
        String.format(
            Locale.ROOT,
            "{\"connector\": \"%s\", \"stepMillis\": %d, \"loads\": %d,"
                + " \"confirmNanos\": %.1f, \"readToAckNanos\": %.1f, \"stepsPerLoad\": %.3f}%n",
            connector,
            STEP.toMillis(),
            loads.sum(),
            (double) confirmNanos.sum() / Math.max(1, confirms.sum()),
            (double) readToAckNanos.sum() / Math.max(1, loads.sum()),
            (double) decodeSteps.sum() / decodes.sum());
    JsonLines.append(FIGURES, line, "the P/D path's figures");
  }

  /** One request computed and generated on one engine. */
  @Benchmark
  public Generation colocated() throws Exception {
    return await(decode.submit(EngineRequest.local("co-" + next++, PROMPT, MAX_TOKENS)));
  }

  /** One request prefilled on P, its KV read by D, generated on D. */
  @Benchmark
  public Generation prefillThenDecode() throws Exception {
    String id = "pd-" + next++;
    Generation first =
        await(
            prefill.submit(
                new EngineRequest(id, PROMPT, PREFILL_MAX_TOKENS, true, Optional.empty())));
    TransferParams params =
        first
            .transferParams()
            .orElseThrow(() -> new IllegalStateException("prefill of " + id + " gave no lease"));
    long stepsBefore = decode.stats().steps();
    Generation decoded =
        await(decode.submit(new EngineRequest(id, PROMPT, MAX_TOKENS, false, Optional.of(params))));
    decodeSteps.add(decode.stats().steps() - stepsBefore);
    decodes.increment();
    if (decoded.kvSource() != Generation.KvSource.LOADED) {
      throw new IllegalStateException("decode of " + id + " did not load its KV: " + decoded);
    }
    return decoded;
  }

  private KvConnector connector(
      String deployment, String engine, Role role, ConnectorObserver observer) {
    return BenchConnectors.create(
        connector, deployment, engine, role, settings -> settings.observer(observer));
  }

  private static Generation await(java.util.concurrent.CompletableFuture<Generation> pending)
      throws InterruptedException, ExecutionException, TimeoutException {
    return pending.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
  }
}
