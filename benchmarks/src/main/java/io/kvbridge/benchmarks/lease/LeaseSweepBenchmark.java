package io.kvbridge.benchmarks.lease;

import io.kvbridge.lease.LeaseEnd;
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
 * Cost of a sweep that finds exactly {@link #EXPIRED} expired leases among {@code liveLeases}, for
 * each {@link LeaseBookKind}. Before each sweep (untimed) the clock moves and as many new leases
 * are granted, so the population stays the same size and the oldest {@link #EXPIRED} are due; after
 * it (untimed) the workload checks that exactly those ended.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms3g", "-Xmx3g"})
public class LeaseSweepBenchmark {

  /** Leases due at each sweep. */
  public static final int EXPIRED = 16;

  /** Live leases in the book while it is measured. */
  @Param({"1000", "10000", "100000", "1000000"})
  public int liveLeases;

  /** The bookkeeping under test. */
  @Param public LeaseBookKind book;

  private LeaseWorkload workload;
  private List<LeaseEnd> swept = List.of();

  /** Fills the book. */
  @Setup(Level.Trial)
  public void fill() {
    workload = new LeaseWorkload(book, liveLeases, EXPIRED, 1).fill();
  }

  /** Grants {@link #EXPIRED} new leases, one spacing apart: the oldest as many become due. */
  @Setup(Level.Invocation)
  public void makeDue() {
    for (int i = 0; i < EXPIRED; i++) {
      workload.grantNext();
    }
  }

  /** Checks that the sweep ended exactly the leases that were due. */
  @TearDown(Level.Invocation)
  public void checkSwept() {
    workload.checkSwept(swept, EXPIRED);
  }

  /** A sweep that finds {@link #EXPIRED} leases due. */
  @Benchmark
  public List<LeaseEnd> sweepExpired() {
    swept = workload.book().expire();
    return swept;
  }
}
