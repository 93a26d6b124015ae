package io.kvbridge.benchmarks.transfer;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.layout.KvLayout.MemoryOrder;
import io.kvbridge.runtime.consumer.ReadPlan;
import java.util.List;
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

/**
 * What planning one read costs the consumer: {@link ReadPlan#of}, the consumer's planner behind the
 * checks of its input, for each {@link PlanShape}. The descriptors each plan holds are not timed;
 * {@link PlanCounts} records them for the report.
 *
 * <p>The parameters hold every combination; {@code benchmarks/run.sh} times a subset. A block-major
 * plan with eight ranks on one side and not the other holds one descriptor per token, layer, plane
 * and rank: past {@value #BLOCK_MAJOR_MAX_TOKENS} tokens that no longer fits the heap below.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms3g", "-Xmx3g"})
public class PlannerBenchmark {

  /** The longest block-major prompt the benchmarks plan. */
  public static final int BLOCK_MAJOR_MAX_TOKENS = 32_768;

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
  @Param({"1024", "8192", "32768", "131072"})
  public int tokens;

  /** Both sides' memory order. */
  @Param({"HEAD_MAJOR", "BLOCK_MAJOR"})
  public MemoryOrder order;

  private List<KvLayout> producer;
  private List<KvLayout> consumer;
  private List<Integer> producerBlocks;
  private List<Integer> consumerBlocks;

  /** Builds the two sides' layouts and block lists, which an engine already holds. */
  @Setup(Level.Trial)
  public void shape() {
    PlanShape shape = PlanShape.of(tp, consumerBlock, tokens, order);
    producer = shape.producer();
    consumer = shape.consumer();
    producerBlocks = shape.producerBlocks();
    consumerBlocks = shape.consumerBlocks();
  }

  /** Plans one read: every READ and its descriptors. */
  @Benchmark
  public ReadPlan plan() {
    return ReadPlan.of(producer, consumer, producerBlocks, consumerBlocks, tokens, 0);
  }
}
