package io.kvbridge.benchmarks.transfer;

import io.kvbridge.transfer.TransferHandle;
import java.nio.ByteBuffer;
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
 * READ bandwidth of the fake connector's transport (post, poll until DONE, release; the fabric
 * copies on its own executor, as the {@code fake} connector does) against a plain {@link
 * ByteBuffer} copy of the same bytes, for each {@link ReadShape}. Time per request; the report
 * turns it into bytes per second.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class FakeReadBenchmark {

  /** Block size and blocks per request; at most {@link ReadShape#MAX_TOTAL_BYTES} per request. */
  @Param({
    "16KiBx1", "16KiBx16", "16KiBx256",
    "256KiBx1", "256KiBx16", "256KiBx256",
    "1MiBx1", "1MiBx16", "1MiBx256",
    "16MiBx1", "16MiBx16"
  })
  public String shape;

  private ReadPair pair;

  /** Creates two agents on a fabric of their own and registers their regions. */
  @Setup(Level.Trial)
  public void connect() {
    pair = ReadPair.overFake(ReadShape.parse(shape));
  }

  /** Checks that both sides moved the right bytes, then closes the agents. */
  @TearDown(Level.Trial)
  public void checkAndClose() {
    try {
      if (!pair.whatRanReproducedTheSource()) {
        throw new IllegalStateException("a copy of " + shape + " did not reproduce the source");
      }
    } finally {
      pair.close();
    }
  }

  /** One READ request through the fake transport, the caller spinning on {@code status}. */
  @Benchmark
  public TransferHandle transportRead() {
    return pair.read(ReadPair.Polling.SPIN);
  }

  /**
   * The same, the caller parking between polls: shows how much of the gap to the raw copy comes
   * from the poller competing with the fabric's copier thread for cores and for the transfer.
   */
  @Benchmark
  public TransferHandle transportReadParked() {
    return pair.read(ReadPair.Polling.PARK);
  }

  /** The same bytes copied with one bulk put per block. */
  @Benchmark
  public ByteBuffer rawCopy() {
    return pair.copy();
  }
}
