package io.kvbridge.benchmarks.transfer;

import io.kvbridge.nixl.NixlOptions;
import io.kvbridge.transfer.TransferHandle;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
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
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;

/**
 * READ through kvbridge's NIXL transport from descriptor lists prepared once ({@link
 * io.kvbridge.transfer.Transport#prepare}): per request a post by block indices, polls until DONE,
 * release; the same agents, options and shapes as {@link NixlReadBenchmark}.
 *
 * <p>Interleaved with NIXL's Python binding doing the same from its prepared lists ({@code
 * make_prepped_xfer}) when {@link PythonRounds}' system properties are set: after every iteration
 * (untimed) the Python side runs one round as long as the iteration, so the two sides alternate A,
 * B, A, B within one trial and meet the same load.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g", "--enable-native-access=ALL-UNNAMED"})
public class NixlPreparedReadBenchmark {

  /** The Python binding's mode that matches this benchmark. */
  public static final String PYTHON_MODE = "prepped";

  /** Block size and blocks per request; at most {@link ReadShape#MAX_TOTAL_BYTES} per request. */
  @Param({
    "16KiBx1", "16KiBx16", "16KiBx256",
    "256KiBx1", "256KiBx16", "256KiBx256",
    "1MiBx1", "1MiBx16", "1MiBx256",
    "16MiBx1", "16MiBx16"
  })
  public String shape;

  /** {@code nixl.progress-delay-us}: the connector's default unless a run asks for another. */
  @Param({"" + NixlOptions.DEFAULT_PROGRESS_DELAY_US})
  public long progressDelayMicros;

  private ReadPair pair;
  private Optional<PythonRounds> python = Optional.empty();
  private int measured;

  /** Creates the two agents, registers their regions and starts the Python side, if asked to. */
  @Setup(Level.Trial)
  public void connect() {
    pair = ReadPair.overNixlHostMemory(ReadShape.parse(shape), progressDelayMicros);
    python = PythonRounds.fromSystemProperties("NixlPreparedReadBenchmark");
  }

  /** After every iteration, untimed: one round of the Python binding, as long as the iteration. */
  @TearDown(Level.Iteration)
  public void pythonRound(IterationParams iteration) {
    boolean measurement = iteration.getType() == IterationType.MEASUREMENT;
    Duration length = Duration.ofNanos(iteration.getTime().convertTo(TimeUnit.NANOSECONDS));
    python.ifPresent(p -> p.run(shape, PYTHON_MODE, length, measured, measurement));
    if (measurement) {
      measured++;
    }
  }

  /** Checks that the reads moved the right bytes, then closes the agents and the Python side. */
  @TearDown(Level.Trial)
  public void checkAndClose() {
    try {
      if (!pair.decodeHoldsPrefillBytes()) {
        throw new IllegalStateException(
            "a prepared NIXL READ of " + shape + " did not reproduce the source");
      }
    } finally {
      pair.close();
      python.ifPresent(PythonRounds::close);
    }
  }

  /** One READ request through kvbridge's NIXL transport, by indices into prepared lists. */
  @Benchmark
  public TransferHandle transportReadPrepared() {
    return pair.readPrepared(ReadPair.Polling.SPIN);
  }
}
