package io.kvbridge.benchmarks.requestpath;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The whole request path under load, one build against another: each build's sample app runs as a
 * prefill node, a decode node and a router in separate JVMs (fake connector, every check on, as
 * {@code docs/sample.md} starts them), and closed-loop clients send completions to its router.
 * Builds take turns, round by round and in alternating order, so drift of a shared machine falls on
 * both; each window reports answers per second, latency, and the CPU time each process spent per
 * answered request. Each build must answer fixed prompts through P and D exactly as its decode node
 * alone computes them. A last, unmeasured window per build records a JFR profile of each of its
 * processes.
 *
 * <pre>
 * java -cp benchmarks.jar io.kvbridge.benchmarks.requestpath.RequestPathRun \
 *   --build this=sample-app/target/kvbridge-sample-app.jar --build 64fa177=old/app.jar \
 *   --rounds 3 --clients 24 --warmup 15 --measure 45 --work DIR --out request-path.json [--jfr DIR]
 * </pre>
 */
public final class RequestPathRun {

  private static final int ANSWER_CHECKS = 12;

  private RequestPathRun() {}

  public static void main(String[] args) throws Exception {
    Map<String, Path> builds = new LinkedHashMap<>();
    int rounds = 3;
    int clients = 24;
    int warmup = 15;
    int measure = 45;
    Path work = null;
    Path out = null;
    Path jfr = null;
    List<String> jvm = List.of("-Xms128m", "-Xmx512m", "-XX:+UseSerialGC");
    for (int i = 0; i < args.length; i += 2) {
      String value = args[i + 1];
      switch (args[i]) {
        case "--build" -> {
          int eq = value.indexOf('=');
          builds.put(value.substring(0, eq), Path.of(value.substring(eq + 1)));
        }
        case "--rounds" -> rounds = Integer.parseInt(value);
        case "--clients" -> clients = Integer.parseInt(value);
        case "--warmup" -> warmup = Integer.parseInt(value);
        case "--measure" -> measure = Integer.parseInt(value);
        case "--work" -> work = Path.of(value);
        case "--out" -> out = Path.of(value);
        case "--jfr" -> jfr = Path.of(value);
        case "--jvm" -> jvm = List.of(value.trim().split("\\s+"));
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    if (builds.size() != 2 || work == null || out == null) {
      throw new IllegalArgumentException("give two --build NAME=JAR, --work DIR and --out FILE");
    }
    List<String> names = new ArrayList<>(builds.keySet());
    StringBuilder json = new StringBuilder("{\n");
    field(json, "clients", clients).append(",\n");
    field(json, "warmup_s", warmup).append(",\n");
    field(json, "measure_s", measure).append(",\n");
    field(json, "prompt_bytes_min", LoadClients.MIN_PROMPT).append(",\n");
    field(json, "prompt_bytes_max", LoadClients.MAX_PROMPT).append(",\n");
    field(json, "max_tokens", LoadClients.MAX_TOKENS).append(",\n");
    json.append("  \"jvm_options\": \"").append(String.join(" ", jvm)).append("\",\n");
    json.append("  \"builds\": [\"").append(String.join("\", \"", names)).append("\"],\n");
    json.append("  \"windows\": [\n");
    Map<String, List<String[]>> answers = new LinkedHashMap<>();
    boolean first = true;
    for (int round = 1; round <= rounds; round++) {
      List<String> order = new ArrayList<>(names);
      if (round % 2 == 0) {
        java.util.Collections.reverse(order);
      }
      for (String build : order) {
        Path dir = work.resolve("round-" + round + "-" + build);
        log("round " + round + ": " + build + " (" + builds.get(build) + ")");
        try (NodeTrio trio = NodeTrio.start(builds.get(build), jvm, dir)) {
          LoadClients load = new LoadClients(trio.completions(), round);
          load.run(clients, Duration.ofSeconds(warmup));
          if (!answers.containsKey(build)) {
            answers.put(build, checkAnswers(trio));
          }
          Map<String, Long> cpuBefore = trio.cpuMillis();
          LoadClients.Window w = load.run(clients, Duration.ofSeconds(measure));
          Map<String, Long> cpuAfter = trio.cpuMillis();
          log(
              String.format(
                  Locale.ROOT,
                  "  %s: %.1f answers/s, p50 %.1f ms, failures %s",
                  build,
                  w.perSecond(),
                  w.percentileNanos(0.5) / 1e6,
                  w.failures()));
          json.append(first ? "" : ",\n");
          first = false;
          window(json, round, build, w, cpuBefore, cpuAfter);
        }
      }
    }
    json.append("\n  ],\n");
    int compared = 0;
    int mismatches = 0;
    for (Map.Entry<String, List<String[]>> e : answers.entrySet()) {
      for (String[] pair : e.getValue()) {
        compared++;
        if (!pair[0].equals(pair[1])) {
          mismatches++;
          log(e.getKey() + " answered '" + pair[0] + "' through P and D, '" + pair[1] + "' alone");
        }
      }
    }
    field(json, "answers_compared", compared).append(",\n");
    field(json, "answers_differing", mismatches);
    if (jfr != null) {
      json.append(",\n  \"profiles\": {");
      for (int i = 0; i < names.size(); i++) {
        String build = names.get(i);
        Path dir = jfr.resolve(build);
        log("profiling " + build + " (JFR, one unmeasured window)");
        try (NodeTrio trio =
            NodeTrio.start(builds.get(build), jvm, work.resolve("profile-" + build))) {
          LoadClients load = new LoadClients(trio.completions(), 99);
          load.run(clients, Duration.ofSeconds(warmup));
          trio.startRecording();
          Map<String, Long> cpuBefore = trio.cpuMillis();
          LoadClients.Window w = load.run(clients, Duration.ofSeconds(measure));
          Map<String, Long> cpuAfter = trio.cpuMillis();
          trio.stopRecording(dir);
          json.append(i == 0 ? "\n" : ",\n").append("    \"").append(build).append("\": ");
          json.append("{\"dir\": \"").append(dir).append("\", \"answered\": ").append(w.answered());
          for (String node : cpuAfter.keySet()) {
            json.append(", \"cpu_ms_").append(node).append("\": ");
            json.append(cpuAfter.get(node) - cpuBefore.get(node));
          }
          json.append("}");
        }
      }
      json.append("\n  }");
    }
    json.append("\n}\n");
    Files.createDirectories(out.toAbsolutePath().getParent());
    Files.writeString(out, json);
    log("wrote " + out);
    if (mismatches > 0) {
      System.exit(3);
    }
  }

  /**
   * Fixed prompts answered through P and D and by the decode node alone, one at a time: each pair
   * must be equal (the sample model's output digests every byte of the KV it decodes from).
   */
  private static List<String[]> checkAnswers(NodeTrio trio) throws InterruptedException {
    LoadClients routed = new LoadClients(trio.completions(), 7);
    LoadClients alone = new LoadClients(trio.decodeCompletions(), 7);
    List<String[]> pairs = new ArrayList<>();
    for (int i = 0; i < ANSWER_CHECKS; i++) {
      String prompt = routed.prompt(i);
      pairs.add(new String[] {routed.answer(prompt), alone.answer(prompt)});
    }
    return pairs;
  }

  private static void window(
      StringBuilder json,
      int round,
      String build,
      LoadClients.Window w,
      Map<String, Long> cpuBefore,
      Map<String, Long> cpuAfter) {
    json.append("    {\"round\": ").append(round).append(", \"build\": \"").append(build);
    json.append("\", \"answered\": ").append(w.answered());
    json.append(", \"seconds\": ").append(String.format(Locale.ROOT, "%.3f", w.nanos() / 1e9));
    json.append(", \"p50_ns\": ").append(w.percentileNanos(0.5));
    json.append(", \"p99_ns\": ").append(w.percentileNanos(0.99));
    json.append(", \"failures\": {");
    boolean first = true;
    for (Map.Entry<String, Long> f : w.failures().entrySet()) {
      json.append(first ? "" : ", ").append('"').append(f.getKey()).append("\": ");
      json.append(f.getValue());
      first = false;
    }
    json.append("}, \"cpu_ms\": {");
    first = true;
    for (String node : cpuAfter.keySet()) {
      json.append(first ? "" : ", ").append('"').append(node).append("\": ");
      json.append(cpuAfter.get(node) - cpuBefore.get(node));
      first = false;
    }
    json.append("}}");
  }

  private static StringBuilder field(StringBuilder json, String name, long value) {
    return json.append("  \"").append(name).append("\": ").append(value);
  }

  private static void log(String line) {
    System.err.println("[request-path] " + line);
  }
}
