package io.kvbridge.benchmarks.transfer;

import io.kvbridge.runtime.consumer.ReadPlan;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jmh.annotations.Param;

/**
 * Records what the requests {@link RealSizeReadBenchmark} reads hold, as a JSON array: the model,
 * its placement, READs, descriptors, bytes and blocks of each. {@code benchmarks/run.sh} runs it
 * with the parameters it gives the benchmark: {@code java -cp benchmarks.jar
 * io.kvbridge.benchmarks.transfer.RealSizeCounts FILE [-p NAME=V1,V2...]...} ({@link
 * RealSizeReadBenchmark}'s own values for those not given), every combination.
 */
public final class RealSizeCounts {

  private static final List<String> PARAMS = List.of("model", "tp", "tokens");

  private RealSizeCounts() {}

  /** Writes the counts of every combination of the parameters to the file named first. */
  public static void main(String[] args) throws IOException {
    if (args.length < 1 || args.length % 2 != 1) {
      throw new IllegalArgumentException("usage: RealSizeCounts FILE [-p NAME=V1,V2...]...");
    }
    Map<String, String[]> values = new LinkedHashMap<>();
    for (String name : PARAMS) {
      values.put(name, declared(name));
    }
    for (int i = 1; i < args.length; i += 2) {
      String[] nameValues = args[i + 1].split("=", 2);
      if (!args[i].equals("-p") || nameValues.length != 2) {
        throw new IllegalArgumentException(
            "expected -p NAME=V1,V2, got " + args[i] + " " + args[i + 1]);
      }
      if (values.containsKey(nameValues[0])) {
        values.put(nameValues[0], nameValues[1].split(","));
      }
    }
    List<String> rows = new ArrayList<>();
    for (String model : values.get("model")) {
      for (String tokens : values.get("tokens")) {
        for (String tp : values.get("tp")) {
          rows.add(
              row(
                  RealSizeShape.of(
                      RealSizeShape.Model.valueOf(model), tp, Integer.parseInt(tokens))));
        }
      }
    }
    Files.writeString(
        Path.of(args[0]), "[\n" + String.join(",\n", rows) + "\n]\n", StandardCharsets.UTF_8);
  }

  private static String[] declared(String field) {
    try {
      return RealSizeReadBenchmark.Request.class.getField(field).getAnnotation(Param.class).value();
    } catch (NoSuchFieldException e) {
      throw new IllegalStateException("RealSizeReadBenchmark has no parameter " + field, e);
    }
  }

  /** One request's counts, as a JSON object keyed by the benchmark's parameter names. */
  static String row(RealSizeShape shape) {
    ReadPlan plan = shape.plan();
    return String.format(
        Locale.ROOT,
        "{\"model\": \"%s\", \"tp\": \"%s\", \"tokens\": \"%d\", \"name\": \"%s\","
            + " \"placement\": \"%s\", \"bytesPerToken\": %d, \"blocks\": %d, \"reads\": %d,"
            + " \"descriptors\": %d, \"bytes\": %d}",
        shape.model().name(),
        shape.tp(),
        shape.tokens(),
        shape.model().kv().source(),
        shape.model().placement().name(),
        shape.model().kv().bytesPerToken(),
        shape.blocks(),
        plan.reads().size(),
        plan.descriptors(),
        plan.bytes());
  }
}
