package io.kvbridge.benchmarks.transfer;

import io.kvbridge.layout.KvLayout.MemoryOrder;
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
 * The fake transport's READ of the requests {@link PlannerBenchmark} plans, with the planner's
 * descriptors ({@link PlannedRead}): what planning is weighed against. Prompts up to {@value
 * PlannedRead#MAX_TOKENS} tokens, whose KV (one GiB a side at that length) both sides hold in this
 * heap.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms5g", "-Xmx5g"})
public class PlannedReadBenchmark {

  /** Producer ranks 'x' consumer ranks. */
  @Param({
    "1x1", "1x2", "1x4", "1x8", "2x1", "2x2", "2x4", "2x8", "4x1", "4x2", "4x4", "4x8", "8x1",
    "8x2", "8x4", "8x8"
  })
  public String tp;

  /** The consumer's block size in tokens; the producer's is 16. */
  @Param({"4", "8", "16", "32", "64"})
  public int consumerBlock;

  /** The prompt's length in tokens, all read. */
  @Param({"1024", "8192"})
  public int tokens;

  /** Both sides' memory order. */
  @Param({"HEAD_MAJOR", "BLOCK_MAJOR"})
  public MemoryOrder order;

  private PlannedRead read;

  /** Creates both sides' agents and regions and the request's descriptor lists. */
  @Setup(Level.Trial)
  public void connect() {
    read = new PlannedRead(PlanShape.of(tp, consumerBlock, tokens, order));
  }

  /** Checks that the READs moved the producer's bytes where the plan says, then closes. */
  @TearDown(Level.Trial)
  public void checkAndClose() {
    try {
      if (!read.consumerHoldsTheProducersBytes()) {
        throw new IllegalStateException("a planned read of " + read.shape() + " misplaced bytes");
      }
    } finally {
      read.close();
    }
  }

  /** One request: every READ of the plan posted, polled until DONE, released. */
  @Benchmark
  public void transportRead() {
    read.read();
  }
}
