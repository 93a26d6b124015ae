package io.kvbridge.benchmarks;

import io.kvbridge.benchmarks.lease.LeaseSweepBenchmark;
import io.kvbridge.benchmarks.lease.LeaseTableOpsBenchmark;
import io.kvbridge.benchmarks.lease.LeaseWorkload;
import io.kvbridge.benchmarks.transfer.PlanShape;
import io.kvbridge.benchmarks.transfer.PlannedRead;
import io.kvbridge.benchmarks.transfer.PlannerBenchmark;
import io.kvbridge.benchmarks.transfer.ReadPair;
import io.kvbridge.benchmarks.transfer.ReadShape;
import io.kvbridge.benchmarks.transfer.RealSizeShape;
import io.kvbridge.benchmarks.ttft.TtftRun;
import io.kvbridge.integrity.ChecksumScheme;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Records, as JSON, the fixed settings the benchmarks in this jar run with (lease duration, batch
 * sizes, the poll pause, the checksum windows, the planned model's shape, the P/D path's engine
 * settings), so that the report states them from the run instead of repeating them by hand. {@code
 * benchmarks/run.sh} runs it once per run: {@code java -cp benchmarks.jar
 * io.kvbridge.benchmarks.RunSettings FILE}.
 */
public final class RunSettings {

  /** The P/D benchmark, compiled into the jar only with the {@code e2e} build profile. */
  private static final String E2E_BENCHMARK = "io.kvbridge.benchmarks.e2e.PdPathBenchmark";

  private RunSettings() {}

  /** Writes the settings to the file named by the only argument. */
  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      throw new IllegalArgumentException("usage: RunSettings FILE (where to write the JSON)");
    }
    Files.writeString(Path.of(args[0]), json(settings()), StandardCharsets.UTF_8);
  }

  /** The settings by section, each a map of name to number. */
  public static Map<String, Map<?, ?>> settings() {
    Map<String, Map<?, ?>> sections = new LinkedHashMap<>();
    sections.put(
        "lease",
        Map.of(
            "leaseDurationSeconds", LeaseWorkload.LEASE.toSeconds(),
            "expiredPerSweep", LeaseSweepBenchmark.EXPIRED,
            "leasesPerTimedBatch", LeaseTableOpsBenchmark.BATCH));
    sections.put(
        "transfer",
        Map.of(
            "maxRequestBytes", ReadShape.MAX_TOTAL_BYTES,
            "parkNanos", ReadPair.Polling.PARK_NANOS));
    sections.put(
        "checksum",
        Map.of(
            "sampledWindows", ChecksumScheme.SAMPLES,
            "windowBytes", ChecksumScheme.WINDOW));
    sections.put(
        "plan",
        Map.of(
            "model", PlanShape.MODEL.name(),
            "layers", PlanShape.LAYERS,
            "kvHeads", PlanShape.KV_HEADS,
            "headDim", PlanShape.HEAD_DIM,
            "dtypeBytes", PlanShape.DTYPE_BYTES,
            "producerTokensPerBlock", PlanShape.PRODUCER_TOKENS_PER_BLOCK,
            "blockMajorMaxTokens", PlannerBenchmark.BLOCK_MAJOR_MAX_TOKENS,
            "readMaxTokens", PlannedRead.MAX_TOKENS));
    sections.put("realSize", Map.of("tokensPerBlock", RealSizeShape.TOKENS_PER_BLOCK));
    sections.put("ttft", TtftRun.settings());
    e2e().ifPresent(settings -> sections.put("e2e", settings));
    return sections;
  }

  /** The P/D benchmark's settings, when this jar holds it. */
  private static Optional<Map<?, ?>> e2e() {
    try {
      // By name: this class is compiled in every build, the P/D benchmark only in some.
      Object settings = Class.forName(E2E_BENCHMARK).getMethod("settings").invoke(null);
      return Optional.of((Map<?, ?>) settings);
    } catch (ClassNotFoundException absent) {
      return Optional.empty();
    } catch (NoSuchMethodException | IllegalAccessException | InvocationTargetException e) {
      throw new IllegalStateException(E2E_BENCHMARK + " has no usable settings() method", e);
    }
  }

  static String json(Map<String, Map<?, ?>> sections) {
    return sections.entrySet().stream()
        .map(
            section ->
                "  \""
                    + section.getKey()
                    + "\": {"
                    + section.getValue().entrySet().stream()
                        .map(e -> "\"" + e.getKey() + "\": " + value(e.getValue()))
                        .sorted()
                        .collect(Collectors.joining(", "))
                    + "}")
        .collect(Collectors.joining(",\n", "{\n", "\n}\n"));
  }

  /** A number as it is; anything else as a JSON string (the settings hold no quotes). */
  private static String value(Object value) {
    return value instanceof Number || value instanceof Boolean
        ? value.toString()
        : "\"" + value + "\"";
  }
}
