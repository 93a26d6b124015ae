package io.kvbridge.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.benchmarks.lease.LeaseSweepBenchmark;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RunSettingsTest {

  /** The settings the report generator's tests write their reports from. */
  private static final Path REPORT_FIXTURE = Path.of("src/test/python/fixture/settings.json");

  private static final Pattern SECTION = Pattern.compile("\"(\\w+)\": \\{([^}]*)}");
  private static final Pattern NAME = Pattern.compile("\"(\\w+)\":");

  @Test
  void theRunRecordsTheSettingsTheReportIsTestedWith() throws IOException {
    Map<String, Set<String>> recorded = names(RunSettings.json(RunSettings.settings()));
    Map<String, Set<String>> fixture = names(Files.readString(REPORT_FIXTURE));

    // The P/D benchmark, and with it its settings, is in the jar only with the e2e profile.
    if (!recorded.containsKey("e2e")) {
      fixture.remove("e2e");
    }
    assertThat(recorded).isEqualTo(fixture);
  }

  @Test
  void theSettingsFileHoldsTheValuesTheBenchmarksRunWith(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("settings.json");

    RunSettings.main(new String[] {file.toString()});

    assertThat(Files.readString(file))
        .contains("\"model\": \"llama-3.1-8b\"")
        .contains("\"expiredPerSweep\": " + LeaseSweepBenchmark.EXPIRED)
        .startsWith("{")
        .endsWith("}\n");
  }

  private static Map<String, Set<String>> names(String json) {
    Map<String, Set<String>> sections = new TreeMap<>();
    Matcher section = SECTION.matcher(json);
    while (section.find()) {
      Set<String> names = new TreeSet<>();
      Matcher name = NAME.matcher(section.group(2));
      while (name.find()) {
        names.add(name.group(1));
      }
      sections.put(section.group(1), names);
    }
    return sections;
  }
}
