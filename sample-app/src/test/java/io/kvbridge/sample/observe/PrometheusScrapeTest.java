package io.kvbridge.sample.observe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.sample.AllInOneServer;
import io.kvbridge.sample.HttpApi;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * After a few completions through the router, {@code /actuator/prometheus} carries kvbridge's
 * meters under their Prometheus names and types, and their values agree with {@code
 * /actuator/kvbridge}; the Grafana dashboard in {@code docs/} queries only metrics a scrape has.
 */
@AllInOneServer
class PrometheusScrapeTest {

  private static final String PREFILL = "api-test-prefill";
  private static final String DECODE = "api-test-decode";
  private static final Pattern SAMPLE =
      Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*\\})? (\\S+)$");

  @LocalServerPort int port;

  private HttpApi api;

  @BeforeEach
  void serveAFewRequests() {
    api = new HttpApi(port);
    for (int i = 0; i < 3; i++) {
      String prompt = "Scraped request " + i + " has a prompt of a few blocks to move. ".repeat(3);
      assertThat(
              api.post("/v1/completions", "{\"prompt\": \"" + prompt + "\", \"max_tokens\": 3}")
                  .status())
          .isEqualTo(200);
    }
  }

  @Test
  void kvbridgeMetersAreScrapedWithTheirPrometheusTypes() {
    Map<String, String> types = types(scrape());

    assertThat(types)
        .containsEntry("kvbridge_leases_granted_total", "counter")
        .containsEntry("kvbridge_leases_ended_total", "counter")
        .containsEntry("kvbridge_leases_active", "gauge")
        .containsEntry("kvbridge_leases_blocks", "gauge")
        .containsEntry("kvbridge_leases_age_seconds", "histogram")
        .containsEntry("kvbridge_transfer_duration_seconds", "histogram")
        .containsEntry("kvbridge_transfer_post_duration_seconds", "histogram")
        .containsEntry("kvbridge_transfer_bytes", "histogram")
        .containsEntry("kvbridge_transfer_descriptors", "histogram")
        .containsEntry("kvbridge_transfer_failures_total", "counter")
        .containsEntry("kvbridge_notifications_failed_total", "counter")
        .containsEntry("kvbridge_rejected_total", "counter")
        .containsEntry("kvbridge_heartbeats_total", "counter")
        .containsEntry("kvbridge_handshake_duration_seconds", "histogram")
        .containsEntry("kvbridge_clock_offset_seconds", "gauge")
        .containsEntry("kvbridge_clock_uncertainty_seconds", "gauge");
  }

  @Test
  void scrapedValuesAgreeWithTheKvbridgeEndpoint() {
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              Map<String, Object> status = api.get("/actuator/kvbridge").json();
              String scrape = scrape();
              Map<String, Object> producer = part(status, PREFILL, "producer");
              Map<String, Object> consumer = part(status, DECODE, "consumer");

              assertThat(value(scrape, "kvbridge_leases_granted_total", PREFILL))
                  .isEqualTo(number(producer.get("leasesGranted")))
                  .isPositive();
              @SuppressWarnings("unchecked")
              Map<String, Object> ended = (Map<String, Object>) producer.get("leasesEnded");
              ended.forEach(
                  (reason, count) ->
                      assertThat(
                              value(
                                  scrape,
                                  "kvbridge_leases_ended_total",
                                  PREFILL,
                                  "reason",
                                  reason.toLowerCase(Locale.ROOT)))
                          .as("ended %s", reason)
                          .isEqualTo(number(count)));
              assertThat(value(scrape, "kvbridge_leases_active", PREFILL))
                  .isEqualTo(number(producer.get("liveLeases")));
              assertThat(value(scrape, "kvbridge_transfer_duration_seconds_count", DECODE))
                  .isEqualTo(number(consumer.get("readsCompleted")))
                  .isGreaterThanOrEqualTo(3);
              assertThat(value(scrape, "kvbridge_transfer_bytes_sum", DECODE))
                  .isEqualTo(number(consumer.get("bytesRead")));
              assertThat(value(scrape, "kvbridge_transfer_descriptors_count", DECODE))
                  .isGreaterThanOrEqualTo(number(consumer.get("readsCompleted")));
              assertThat(value(scrape, "kvbridge_transfer_failures_total", DECODE))
                  .isEqualTo(number(consumer.get("loadsFailed")));
              assertThat(
                      value(
                          scrape,
                          "kvbridge_handshake_duration_seconds_count",
                          DECODE,
                          "outcome",
                          "accepted"))
                  .isPositive();
              assertThat(
                      value(
                          scrape,
                          "kvbridge_clock_uncertainty_seconds",
                          DECODE,
                          "producer",
                          PREFILL))
                  .isPositive();
              @SuppressWarnings("unchecked")
              Map<String, Object> rejected =
                  (Map<String, Object>) connector(status, DECODE).get("rejected");
              rejected.forEach(
                  (kind, count) ->
                      assertThat(
                              value(
                                  scrape,
                                  "kvbridge_rejected_total",
                                  DECODE,
                                  "kind",
                                  kind.toLowerCase(Locale.ROOT)))
                          .as("rejected %s", kind)
                          .isEqualTo(number(count)));
            });
  }

  @Test
  void everyMetricTheGrafanaDashboardQueriesIsScraped() throws Exception {
    String dashboard = Files.readString(Path.of("..", "docs", "grafana-kvbridge.json"));
    Set<String> scraped = new HashSet<>();
    for (String line : scrape().split("\n")) {
      Matcher m = SAMPLE.matcher(line);
      if (m.matches()) {
        scraped.add(m.group(1));
      }
    }
    Matcher queried = Pattern.compile("kvbridge_[a-z_]+").matcher(dashboard);
    Set<String> names = new HashSet<>();
    while (queried.find()) {
      names.add(queried.group());
    }

    assertThat(names).hasSizeGreaterThan(10);
    assertThat(scraped).containsAll(names);
  }

  private String scrape() {
    HttpApi.Answer answer = api.get("/actuator/prometheus");
    assertThat(answer.status()).isEqualTo(200);
    return answer.body();
  }

  /** Each metric family's type, from its {@code # TYPE} line. */
  private static Map<String, String> types(String scrape) {
    Map<String, String> types = new HashMap<>();
    for (String line : scrape.split("\n")) {
      if (line.startsWith("# TYPE ")) {
        String[] parts = line.split(" ");
        types.put(parts[2], parts[3]);
      }
    }
    return types;
  }

  /** The value of the sample named {@code name} whose labels hold the engine and {@code more}. */
  private static double value(String scrape, String name, String engine, String... more) {
    for (String line : scrape.split("\n")) {
      Matcher m = SAMPLE.matcher(line);
      if (!m.matches() || !m.group(1).equals(name) || m.group(2) == null) {
        continue;
      }
      String labels = m.group(2);
      boolean all = labels.contains("engine=\"" + engine + "\"");
      for (int i = 0; i < more.length; i += 2) {
        all &= labels.contains(more[i] + "=\"" + more[i + 1] + "\"");
      }
      if (all) {
        return Double.parseDouble(m.group(3));
      }
    }
    throw new AssertionError("no sample " + name + " for engine " + engine + " " + List.of(more));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> connector(Map<String, Object> status, String engineId) {
    return ((List<Map<String, Object>>) status.get("connectors"))
        .stream()
            .filter(c -> engineId.equals(c.get("engineId")))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no connector " + engineId + " in " + status));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> part(
      Map<String, Object> status, String engineId, String part) {
    return (Map<String, Object>) connector(status, engineId).get(part);
  }

  private static double number(Object value) {
    return ((Number) value).doubleValue();
  }
}
