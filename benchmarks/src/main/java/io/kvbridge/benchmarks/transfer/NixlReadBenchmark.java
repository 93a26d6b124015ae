package io.kvbridge.benchmarks.transfer;

import io.kvbridge.nixl.NixlOptions;
import io.kvbridge.transfer.TransferHandle;
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

/**
 * READ through kvbridge's NIXL transport: two agents in one JVM, host memory, the connector's
 * default options otherwise (UCX backend, its default progress-thread delay); the same pattern and
 * shapes as {@link FakeReadBenchmark}. Compared in the report with the same pattern run through
 * NIXL's own Python binding ({@code benchmarks/python/nixl_read_bench.py}).
 *
 * <p>Needs the NIXL libraries ({@code -Dkvbridge.nixl.home}, as {@code benchmarks/run.sh} passes)
 * and, for two agents in one process, UCX transports that work over loopback (e.g. {@code
 * UCX_TLS=self,sm,tcp}).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g", "--enable-native-access=ALL-UNNAMED"})
public class NixlReadBenchmark {

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

  /** Creates the two agents and registers their regions. */
  @Setup(Level.Trial)
  public void connect() {
    pair = ReadPair.overNixlHostMemory(ReadShape.parse(shape), progressDelayMicros);
  }

  /** Checks that the reads moved the right bytes, then closes the agents. */
  @TearDown(Level.Trial)
  public void checkAndClose() {
    try {
      if (!pair.decodeHoldsPrefillBytes()) {
        throw new IllegalStateException(
            "a NIXL READ of " + shape + " did not reproduce the source");
      }
    } finally {
      pair.close();
    }
  }

  /** One READ request through kvbridge's NIXL transport. */
  @Benchmark
  public TransferHandle transportRead() {
    return pair.read(ReadPair.Polling.SPIN);
  }
}
