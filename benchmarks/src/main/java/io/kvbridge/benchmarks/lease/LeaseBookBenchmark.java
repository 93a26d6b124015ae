package io.kvbridge.benchmarks.lease;

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
 * Per-event cost of lease bookkeeping with {@code liveLeases} leases live, for each {@link
 * LeaseBookKind}: a grant followed by its confirmation and read acknowledgement (the population
 * stays the same size), a heartbeat renewal, and a sweep when nothing is due.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms3g", "-Xmx3g"})
public class LeaseBookBenchmark {

  private static final int FRESH = 1024;

  /** Live leases in the book while it is measured. */
  @Param({"1000", "10000", "100000", "1000000"})
  public int liveLeases;

  /** The bookkeeping under test. */
  @Param public LeaseBookKind book;

  private LeaseWorkload workload;
  private int fresh;

  /** Fills the book. */
  @Setup(Level.Trial)
  public void fill() {
    workload = new LeaseWorkload(book, liveLeases, 0, FRESH).fill();
  }

  /** Checks the population did not shrink or grow: the operations kept it steady. */
  @TearDown(Level.Trial)
  public void checkSteady() {
    int size = workload.book().size();
    if (size != liveLeases) {
      throw new IllegalStateException("expected " + liveLeases + " live leases, found " + size);
    }
  }

  /** A lease granted, then confirmed and acknowledged by its consumer (ends as READ). */
  @Benchmark
  public boolean grantAndAcknowledge() {
    int i = fresh;
    fresh = (i + 1) & (FRESH - 1);
    workload.grantFresh(i);
    workload.confirmFresh(i);
    return workload.acknowledgeFresh(i);
  }

  /** A heartbeat that extends the soonest-expiring live lease. */
  @Benchmark
  public boolean renew() {
    return workload.renewNext();
  }

  /** A sweep that finds nothing due. */
  @Benchmark
  public Object sweepIdle() {
    return workload.book().expire();
  }
}
