package io.kvbridge.benchmarks.transfer;

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
 * One agent exchanging READs with several peers at once ({@link PeerGroup}): one decode agent
 * reading from 1, 2, 4 or 8 prefill agents, and one prefill agent served to as many decode agents,
 * on the fake transport and on NIXL host memory. Time per request, a request being one READ of
 * {@link #shape} per peer; the report divides the bytes by the time and compares the aggregate with
 * a single peer's.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms2g", "-Xmx2g", "--enable-native-access=ALL-UNNAMED"})
public class ManyPeersBenchmark {

  /** Which transport carries the READs. */
  public enum Carrier {
    /** The fake connector's transport. */
    FAKE,
    /** NIXL with host memory; needs the NIXL libraries. */
    NIXL
  }

  /** The transport. */
  @Param({"FAKE", "NIXL"})
  public Carrier transport;

  /** Which side is one agent. */
  @Param({"ONE_DECODE_MANY_PREFILLS", "ONE_PREFILL_MANY_DECODES"})
  public PeerGroup.Direction direction;

  /** How many peers the one agent exchanges READs with at once. */
  @Param({"1", "2", "4", "8"})
  public int peers;

  /** What each peer's READ moves. */
  @Param({"1MiBx16"})
  public String shape;

  private PeerGroup group;

  /** Creates and connects the agents and registers their regions. */
  @Setup(Level.Trial)
  public void connect() {
    ReadShape parsed = ReadShape.parse(shape);
    group =
        transport == Carrier.FAKE
            ? PeerGroup.overFake(parsed, peers, direction)
            : PeerGroup.overNixlHostMemory(parsed, peers, direction);
  }

  /** Checks that every READ moved the right bytes, then closes the agents. */
  @TearDown(Level.Trial)
  public void checkAndClose() {
    try {
      if (!group.everyTargetHoldsItsSource()) {
        throw new IllegalStateException(
            "a READ of " + shape + " among " + peers + " peers did not reproduce its source");
      }
    } finally {
      group.close();
    }
  }

  /** One READ per peer, all posted before any is polled. */
  @Benchmark
  public PeerGroup readFromEveryPeer() {
    group.readAll();
    return group;
  }
}
