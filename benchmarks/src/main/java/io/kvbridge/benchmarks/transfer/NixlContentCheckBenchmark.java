package io.kvbridge.benchmarks.transfer;

import io.kvbridge.nixl.NixlOptions;
import org.openjdk.jmh.annotations.Fork;

/**
 * {@link ContentCheckBenchmark} on kvbridge's NIXL transport: host memory from the C heap, two
 * agents in one JVM, as {@link NixlReadBenchmark} (and with what it needs to run).
 */
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g", "--enable-native-access=ALL-UNNAMED"})
public class NixlContentCheckBenchmark extends ContentCheckBenchmark {

  @Override
  ReadPair connect(ReadShape shape) {
    return ReadPair.overNixlHostMemory(shape, NixlOptions.DEFAULT_PROGRESS_DELAY_US);
  }
}
