package io.kvbridge.benchmarks.transfer;

import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.transfer.TransferHandle;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What the consumer's content check costs beside the READ it checks: one block READ through a
 * transport, and the checksum of that block in the consumer's memory under each {@link
 * ChecksumScheme}, measured in the same trial setup. The report divides the checksum's time by the
 * READ's. Subclasses choose the transport; the time per operation is what JMH reports.
 *
 * <p>Threads: JMH runs each trial on one thread.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public abstract class ContentCheckBenchmark {

  /** The size of the one block each operation handles. */
  @Param({"16KiB", "256KiB", "1MiB", "4MiB"})
  public String block;

  private ReadPair pair;

  /** The two agents, each with a region of {@code shape}'s size. */
  abstract ReadPair connect(ReadShape shape);

  /**
   * Connects the agents and READs the block once, untimed, so the consumer's memory holds the
   * producer's bytes whichever operation the trial times.
   */
  @Setup(Level.Trial)
  public void connectAndRead() {
    pair = connect(ReadShape.parse(block + "x1"));
    pair.read(ReadPair.Polling.SPIN);
  }

  /** Checks that the block read and its checksums match the source's, then closes the agents. */
  @TearDown(Level.Trial)
  public void checkAndClose() {
    try {
      if (!pair.decodeHoldsPrefillBytes()) {
        throw new IllegalStateException("a READ of one " + block + " block changed its bytes");
      }
      for (ChecksumScheme scheme : ChecksumScheme.values()) {
        if (!Arrays.equals(pair.checksumsOfRead(scheme), pair.checksumsOfSource(scheme))) {
          throw new IllegalStateException(
              scheme.wireName() + " of a " + block + " block differs between the two sides");
        }
      }
    } finally {
      pair.close();
    }
  }

  /** One READ of the block, the caller spinning on {@code status}, as the READ benchmarks do. */
  @Benchmark
  public TransferHandle transportRead() {
    return pair.read(ReadPair.Polling.SPIN);
  }

  /** The check a consumer runs on host memory: CRC-32C over every byte of the block it read. */
  @Benchmark
  public int[] crc32c() {
    return pair.checksumsOfRead(ChecksumScheme.CRC32C);
  }

  /** The check a consumer runs on device memory: CRC-32C over spread windows of the block. */
  @Benchmark
  public int[] crc32cSampled() {
    return pair.checksumsOfRead(ChecksumScheme.CRC32C_SAMPLED);
  }
}
