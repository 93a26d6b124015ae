package io.kvbridge.benchmarks.transfer;

import org.openjdk.jmh.annotations.Fork;

/** {@link ContentCheckBenchmark} on the fake transport: host memory on the Java heap. */
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class FakeContentCheckBenchmark extends ContentCheckBenchmark {

  @Override
  ReadPair connect(ReadShape shape) {
    return ReadPair.overFake(shape);
  }
}
