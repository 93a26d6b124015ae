package io.kvbridge.benchmarks.transfer;

import io.kvbridge.layout.KvLayout.MemoryOrder;
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
 * Records what the requests the planner benchmarks plan hold: READs, descriptors and bytes, as a
 * JSON array. These do not vary from run to run, but the report states them from the run like every
 * other figure. {@code benchmarks/run.sh} runs it for the requests it times and for a grid of every
 * TP pair and block size: {@code java -cp benchmarks.jar io.kvbridge.benchmarks.transfer.PlanCounts
 * FILE [-p NAME=V1,V2...]...}, the parameters as JMH takes them ({@link PlannerBenchmark}'s own
 * values for those not given), every combination.
 */
public final class PlanCounts {

  private static final List<String> PARAMS = List.of("tp", "consumerBlock", "tokens", "order");

  private PlanCounts() {}

  /** Writes the counts of every combination of the parameters to the file named first. */
  public static void main(String[] args) throws IOException {
    if (args.length < 1 || args.length % 2 != 1) {
      throw new IllegalArgumentException("usage: PlanCounts FILE [-p NAME=V1,V2...]...");
    }
    Map<String, String[]> values = new LinkedHashMap<>();
    for (String name : PARAMS) {
      values.put(name, declared(name));
    }
    for (int i = 1; i < args.length; i += 2) {
      String[] nameValues = args[i + 1].split("=", 2);
      if (!args[i].equals("-p") || nameValues.length != 2 || !values.containsKey(nameValues[0])) {
        throw new IllegalArgumentException(
            "expected -p NAME=V1,V2 with NAME one of "
                + PARAMS
                + ", got "
                + args[i]
                + " "
                + args[i + 1]);
      }
      values.put(nameValues[0], nameValues[1].split(","));
    }
    List<String> rows = new ArrayList<>();
    for (String order : values.get("order")) {
      for (String tokens : values.get("tokens")) {
        for (String tp : values.get("tp")) {
          for (String block : values.get("consumerBlock")) {
            rows.add(
                row(
                    PlanShape.of(
                        tp,
                        Integer.parseInt(block),
                        Integer.parseInt(tokens),
                        MemoryOrder.valueOf(order))));
          }
        }
      }
    }
    Files.writeString(
        Path.of(args[0]), "[\n" + String.join(",\n", rows) + "\n]\n", StandardCharsets.UTF_8);
  }

  /** The values {@link PlannerBenchmark} declares for its parameter {@code field}. */
  private static String[] declared(String field) {
    try {
      return PlannerBenchmark.class.getField(field).getAnnotation(Param.class).value();
    } catch (NoSuchFieldException e) {
      throw new IllegalStateException("PlannerBenchmark has no parameter " + field, e);
    }
  }

  /** One request's counts, as a JSON object keyed by the benchmarks' parameter names. */
  static String row(PlanShape shape) {
    ReadPlan plan = shape.plan();
    return String.format(
        Locale.ROOT,
        "{\"tp\": \"%dx%d\", \"consumerBlock\": \"%d\", \"tokens\": \"%d\", \"order\": \"%s\","
            + " \"reads\": %d, \"descriptors\": %d, \"bytes\": %d}",
        shape.producerRanks(),
        shape.consumerRanks(),
        shape.consumerTokensPerBlock(),
        shape.tokens(),
        shape.order().name(),
        plan.reads().size(),
        plan.descriptors(),
        plan.bytes());
  }
}
