package io.kvbridge.benchmarks.e2e;

import io.kvbridge.fake.FakeTransportProvider;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.nixl.MemoryMode;
import io.kvbridge.nixl.NixlOptions;
import io.kvbridge.nixl.NixlTransportProvider;
import io.kvbridge.runtime.ConnectorRegistry;
import io.kvbridge.sample.engine.Engine;
import io.kvbridge.sample.engine.EngineFactory;
import io.kvbridge.sample.engine.EngineRequest;
import io.kvbridge.sample.engine.EngineShape;
import io.kvbridge.sample.engine.Generation;
import io.kvbridge.sample.engine.ToyModel;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.LoadFailurePolicy;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.spi.TransportProvider;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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

  /** The sample app's default step interval. */
  private static final Duration STEP = Duration.ofMillis(2);

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

  /** Starts both engines, each with its own connector of the chosen type. */
  @Setup(Level.Trial)
  public void start() {
    String deployment = "bench-" + UUID.randomUUID();
    EngineFactory factory = new EngineFactory(LoadFailurePolicy.FAIL, STEP);
    prefill = factory.start(connector(deployment, "prefill", Role.PRODUCER), SHAPE);
    decode = factory.start(connector(deployment, "decode", Role.CONSUMER), SHAPE);
  }

  /** Stops both engines. */
  @TearDown(Level.Trial)
  public void stop() {
    decode.close();
    prefill.close();
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
    Generation decoded =
        await(decode.submit(new EngineRequest(id, PROMPT, MAX_TOKENS, false, Optional.of(params))));
    if (decoded.kvSource() != Generation.KvSource.LOADED) {
      throw new IllegalStateException("decode of " + id + " did not load its KV: " + decoded);
    }
    return decoded;
  }

  private KvConnector connector(String deployment, String engine, Role role) {
    TransportProvider provider;
    Map<String, String> properties;
    switch (connector) {
      case FakeTransportProvider.TYPE -> {
        provider = new FakeTransportProvider();
        properties = Map.of(FakeTransportProvider.FABRIC, deployment);
      }
      case NixlTransportProvider.TYPE -> {
        provider = new NixlTransportProvider();
        properties = Map.of(NixlOptions.MEMORY, MemoryMode.DRAM.toString());
      }
      default ->
          throw new IllegalArgumentException(
              "connector '" + connector + "' is not wired into this benchmark; use fake or nixl");
    }
    ConnectorSettings settings =
        ConnectorSettings.builder(provider.type(), deployment + "-" + engine)
            .role(role)
            .properties(properties)
            .build();
    return ConnectorRegistry.of(List.of(provider)).create(settings);
  }

  private static Generation await(java.util.concurrent.CompletableFuture<Generation> pending)
      throws InterruptedException, ExecutionException, TimeoutException {
    return pending.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
  }
}
