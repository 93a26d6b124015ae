package io.kvbridge.benchmarks.lease;

import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
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
 * {@link io.kvbridge.lease.LeaseTable} under churn: a steady population of live leases (a million
 * by default) while leases are granted, renewed by heartbeats and acknowledged, and the sweep runs;
 * time per operation, and allocation per operation. Run it with JMH's GC profiler ({@code -prof
 * gc}), whose {@code gc.alloc.rate.norm} is every byte the benchmark thread allocated in an
 * iteration over the operations it timed. That also counts what an invocation's untimed setup
 * allocates, so the grant and acknowledge benchmarks, whose batches are granted or acknowledged
 * untimed around the timed half, also count the bytes allocated inside the timed calls alone
 * ({@link Allocation}, from the JVM's per-thread allocation counter read before and after the
 * batch).
 *
 * <p>Every acknowledgement presents the same claim object ({@link LeaseTableBook}'s read check,
 * made once), as a producer's completion handler would reuse one per consumer.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms3g", "-Xmx3g"})
public class LeaseChurnBenchmark {

  /** Leases granted or acknowledged per timed invocation. */
  public static final int BATCH = 64;

  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  /** The table, filled with its live leases; shared by the operations of one trial. */
  @State(Scope.Thread)
  public static class Churn {
    /** Live leases in the table while it is measured. */
    @Param({"1000000"})
    public int liveLeases;

    LeaseWorkload workload;

    /** Fills the table, then renews every lease once so the deadline order is churned. */
    @Setup(Level.Trial)
    public void fill() {
      workload = new LeaseWorkload(LeaseBookKind.TABLE, liveLeases, 0, BATCH).fill();
      for (int i = 0; i < liveLeases; i++) {
        workload.renewNext();
      }
    }

    /** Checks the population stayed steady. */
    @TearDown(Level.Trial)
    public void checkSteady() {
      int size = workload.book().size();
      if (size != liveLeases) {
        throw new IllegalStateException("expected " + liveLeases + " live leases, found " + size);
      }
    }
  }

  /**
   * Bytes the benchmark thread allocated inside the timed calls, and how many calls: the report
   * divides one by the other. Reset every iteration.
   */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.EVENTS)
  public static class Allocation {
    /** Bytes allocated by the timed calls of this iteration. */
    public long allocatedBytes;

    /** Timed calls of this iteration. */
    public long calls;

    /** Starts the iteration's counts from zero. */
    @Setup(Level.Iteration)
    public void reset() {
      if (!THREADS.isThreadAllocatedMemorySupported()
          || !THREADS.isThreadAllocatedMemoryEnabled()) {
        throw new IllegalStateException("this JVM does not count the bytes a thread allocates");
      }
      allocatedBytes = 0;
      calls = 0;
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
    public void grant(Churn churn) {
      workload = churn.workload;
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
    public void bind(Churn churn) {
      workload = churn.workload;
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

  /** A heartbeat: the next live lease's deadline moves one lease duration ahead. */
  @Benchmark
  public boolean renew(Churn churn, Allocation allocation) {
    long before = THREADS.getCurrentThreadAllocatedBytes();
    boolean renewed = churn.workload.renewNext();
    allocation.allocatedBytes += THREADS.getCurrentThreadAllocatedBytes() - before;
    allocation.calls++;
    return renewed;
  }

  /** A read acknowledgement that ends its lease (per lease of the batch). */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int acknowledge(Granted batch, Allocation allocation) {
    long before = THREADS.getCurrentThreadAllocatedBytes();
    int accepted = 0;
    for (int i = 0; i < BATCH; i++) {
      if (batch.workload.acknowledgeFresh(i)) {
        accepted++;
      }
    }
    allocation.allocatedBytes += THREADS.getCurrentThreadAllocatedBytes() - before;
    allocation.calls += BATCH;
    return accepted;
  }

  /** A grant (per lease of the batch). */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int grant(ToAcknowledge batch, Allocation allocation) {
    long before = THREADS.getCurrentThreadAllocatedBytes();
    for (int i = 0; i < BATCH; i++) {
      batch.workload.grantFresh(i);
    }
    allocation.allocatedBytes += THREADS.getCurrentThreadAllocatedBytes() - before;
    allocation.calls += BATCH;
    return batch.workload.book().size();
  }

  /** A sweep that finds nothing due, in the churned table: what most engine steps run. */
  @Benchmark
  public Object sweepIdle(Churn churn) {
    return churn.workload.book().expire();
  }
}
