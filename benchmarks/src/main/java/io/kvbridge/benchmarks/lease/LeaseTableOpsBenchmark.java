package io.kvbridge.benchmarks.lease;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Grant and acknowledgement of {@link io.kvbridge.lease.LeaseTable} timed apart, to check each
 * against its own goal: each invocation grants (or acknowledges) {@link #BATCH} leases, and the
 * other half of the pair runs untimed around it. Reported per lease.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms3g", "-Xmx3g"})
public class LeaseTableOpsBenchmark {

  /** Leases granted or acknowledged per timed invocation. */
  public static final int BATCH = 64;

  /** The table, filled with its live leases. */
  @State(Scope.Thread)
  public static class Population {
    /** Live leases in the table while it is measured. */
    @Param({"1000", "10000", "100000", "1000000"})
    public int liveLeases;

    LeaseWorkload workload;

    /** Fills the table. */
    @Setup(Level.Trial)
    public void fill() {
      workload = new LeaseWorkload(LeaseBookKind.TABLE, liveLeases, 0, BATCH).fill();
    }
  }

  /**
   * State for timing acknowledgements: the batch is granted and confirmed before each invocation.
   */
  @State(Scope.Thread)
  public static class Granted {
    LeaseWorkload workload;

    /** Grants and confirms the batch, untimed. */
    @Setup(Level.Invocation)
    public void grant(Population population) {
      workload = population.workload;
      for (int i = 0; i < BATCH; i++) {
        workload.grantFresh(i);
        workload.confirmFresh(i);
      }
    }
  }

  /** State for timing grants: the batch is confirmed and acknowledged after each invocation. */
  @State(Scope.Thread)
  public static class ToAcknowledge {
    LeaseWorkload workload;

    /** Binds to the workload. */
    @Setup(Level.Trial)
    public void bind(Population population) {
      workload = population.workload;
    }

    /** Confirms and acknowledges the batch, untimed. */
    @TearDown(Level.Invocation)
    public void acknowledge() {
      for (int i = 0; i < BATCH; i++) {
        if (!workload.confirmFresh(i) || !workload.acknowledgeFresh(i)) {
          throw new IllegalStateException("fresh lease " + i + " was not acknowledged");
        }
      }
    }
  }

  /** One grant (per lease of the batch). */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int grant(ToAcknowledge batch) {
    for (int i = 0; i < BATCH; i++) {
      batch.workload.grantFresh(i);
    }
    return batch.workload.book().size();
  }

  /** One read acknowledgement (per lease of the batch). */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int acknowledge(Granted batch) {
    int accepted = 0;
    for (int i = 0; i < BATCH; i++) {
      if (batch.workload.acknowledgeFresh(i)) {
        accepted++;
      }
    }
    return accepted;
  }
}
