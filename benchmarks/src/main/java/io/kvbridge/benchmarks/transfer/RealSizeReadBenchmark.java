package io.kvbridge.benchmarks.transfer;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.runtime.consumer.ReadPlan;
import io.kvbridge.runtime.consumer.StagingModel;
import io.kvbridge.spi.ReadStaging;
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
import org.openjdk.jmh.annotations.TearDown;

/**
 * One request of a real model's KV at real size ({@link RealSizeShape}: Llama-3.1-8B per layer,
 * DeepSeek-V3's MLA latent per layer; up to 32k tokens, four GiB a side), and what the report
 * weighs its READ against, each in its own trial with only the state it needs:
 *
 * <ul>
 *   <li>{@link #transportRead}: every READ of the plan through the fake transport or NIXL host
 *       memory, descriptors resolved through each rank's regions ({@link PlannedRead}); a staged
 *       READ (where the consumer's staging model stages it) lands in staging memory and its rows
 *       are copied into place once it is done, inside the timing;
 *   <li>{@link #copy}: the same bytes copied by one thread, region to region ({@link RegionCopy});
 *   <li>{@link #plan}: planning the request ({@link ReadPlan#of});
 *   <li>{@link #contentCheck}: the consumer's content check left once the last READ finished: the
 *       CRC-32C of the last stage's blocks ({@link PlannedRead#checkContent}).
 * </ul>
 *
 * <p>The fake transport and the copy hold both sides in the Java heap (eight GiB at the largest),
 * NIXL in the C heap: the fork's heap is sized for the former. {@link RealSizeCounts} records what
 * each plan holds.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xmx" + RealSizeReadBenchmark.HEAP, "--enable-native-access=ALL-UNNAMED"})
public class RealSizeReadBenchmark {

  /** The fork's heap: both sides of the largest request, and room for the rest. */
  public static final String HEAP = "11g";

  /** The request: model, TP pair and prompt length, whatever handles it. */
  @State(Scope.Thread)
  public abstract static class Request {

    /** The model and its placement. */
    @Param({"LLAMA_3_1_8B", "DEEPSEEK_V3"})
    public RealSizeShape.Model model;

    /** Producer ranks 'x' consumer ranks. */
    @Param({"1x1", "2x1", "1x2"})
    public String tp;

    /** The prompt's length in tokens, all read. */
    @Param({"1024", "8192", "32768"})
    public int tokens;

    RealSizeShape shape() {
      return RealSizeShape.of(model, tp, tokens);
    }
  }

  /**
   * A request as a consumer rank on one transport reads it: in place, or staged where its model
   * says.
   */
  @State(Scope.Thread)
  public abstract static class Carried extends Request {

    /** The transport. */
    @Param({"FAKE", "NIXL"})
    public ManyPeersBenchmark.Carrier transport;

    /**
     * How the consumer reads between ranks that split a token's heads differently: {@code AUTO}
     * (the consumer's default: staged where the transport's cost model says), {@code NEVER} or
     * {@code ALWAYS}.
     */
    @Param({"AUTO", "NEVER", "ALWAYS"})
    public ReadStaging.Mode staging;

    StagingModel model() {
      return StagingModels.of(transport, staging);
    }
  }

  /** Both sides' layouts and block lists, which an engine already holds, and its staging model. */
  @State(Scope.Thread)
  public static class Planning extends Carried {
    List<KvLayout> producer;
    List<KvLayout> consumer;
    List<Integer> producerBlocks;
    List<Integer> consumerBlocks;
    StagingModel model;

    /** Builds the layouts and block lists, and measures the staging model. */
    @Setup(Level.Trial)
    public void build() {
      RealSizeShape shape = shape();
      producer = shape.producer();
      consumer = shape.consumer();
      producerBlocks = shape.producerBlocks();
      consumerBlocks = shape.consumerBlocks();
      model = model();
    }
  }

  /** The one-thread copy of the request's bytes. */
  @State(Scope.Thread)
  public static class Copying extends Request {
    RegionCopy copy;

    /** Allocates and fills the regions. */
    @Setup(Level.Trial)
    public void allocate() {
      copy = new RegionCopy(shape());
    }

    /** Checks that the copy moved the bytes. */
    @TearDown(Level.Trial)
    public void check() {
      if (!copy.copied()) {
        throw new IllegalStateException("a copy of " + shape() + " changed its bytes");
      }
      copy = null;
    }
  }

  /** Both sides' agents and regions, and the plan's descriptor lists. */
  @State(Scope.Thread)
  public static class Reading extends Carried {

    PlannedRead read;

    /**
     * Connects the agents, registers every region and READs the request once, untimed, so the
     * consumer's memory holds the producer's bytes whichever operation the trial times; records
     * what the plan holds ({@link StagedReads}).
     */
    @Setup(Level.Trial)
    public void connectAndRead() {
      RealSizeShape shape = shape();
      StagingModel model = model();
      read =
          transport == ManyPeersBenchmark.Carrier.FAKE
              ? PlannedRead.overFake(shape, model)
              : PlannedRead.overNixlHostMemory(shape, model);
      read.read();
      StagedReads.record(this, model, read);
    }

    /** Checks that the READs put the producer's bytes where the plan says, then closes. */
    @TearDown(Level.Trial)
    public void checkAndClose() {
      try {
        if (!read.consumerHoldsTheProducersBytes()) {
          throw new IllegalStateException("a READ of " + shape() + " misplaced bytes");
        }
      } finally {
        read.close();
        read = null;
      }
    }
  }

  /** One request: every READ of the plan posted, polled (spinning) until DONE, released. */
  @Benchmark
  public void transportRead(Reading state) {
    state.read.read();
  }

  /** The content check left once the request's last READ finished: the last stage's. */
  @Benchmark
  public int contentCheck(Reading state) {
    return state.read.checkContent();
  }

  /** The request's bytes copied by this thread, region to region. */
  @Benchmark
  public void copy(Copying state) {
    state.copy.copy();
  }

  /** Plans the request: every READ and its descriptors. */
  @Benchmark
  public ReadPlan plan(Planning state) {
    return ReadPlan.of(
        state.producer,
        state.consumer,
        state.producerBlocks,
        state.consumerBlocks,
        state.tokens,
        0,
        state.model);
  }
}
