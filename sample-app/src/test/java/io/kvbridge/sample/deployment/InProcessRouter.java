package io.kvbridge.sample.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.sample.SampleApplication;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.client.RestClient;

/**
 * The {@code router} profile in the test's JVM, in front of one prefill and one decode node that
 * run as child JVMs. Thread-safe: {@link #complete} may be called from any thread.
 */
final class InProcessRouter implements AutoCloseable {

  private final ConfigurableApplicationContext context;
  private final String url;

  private InProcessRouter(ConfigurableApplicationContext context) {
    this.context = context;
    this.url = "http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port");
  }

  /** A router over {@code prefill} and {@code decode}, with {@code settings} added. */
  static InProcessRouter start(ChildNode prefill, ChildNode decode, String... settings) {
    List<String> arguments =
        new ArrayList<>(
            List.of(
                "--server.port=0",
                "--kvbridge.sample.router.prefill-urls=" + prefill.url(),
                "--kvbridge.sample.router.decode-urls=" + decode.url()));
    arguments.addAll(List.of(settings));
    return new InProcessRouter(
        new SpringApplicationBuilder(SampleApplication.class)
            .profiles("router")
            .run(arguments.toArray(String[]::new)));
  }

  /** What the router reports of itself on {@code /actuator/info}. */
  @SuppressWarnings("unchecked")
  Map<String, Object> stats() {
    return (Map<String, Object>)
        RestClient.create(url)
            .get()
            .uri("/actuator/info")
            .retrieve()
            .body(ChildNode.JSON)
            .get("kvbridgeRouter");
  }

  /** Waits until the router's own probes found every node UP. */
  @SuppressWarnings("unchecked")
  void awaitSeesEveryNodeHealthy() {
    await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(250))
        .untilAsserted(
            () -> {
              Map<String, Object> router = stats();
              for (String pool : List.of("prefill", "decode")) {
                assertThat((List<Map<String, Object>>) router.get(pool))
                    .as("the router's %s nodes", pool)
                    .allSatisfy(node -> assertThat(node).containsEntry("healthy", true));
              }
            });
  }

  /**
   * Posts a completion request; answers with the response's JSON body and its status under {@code
   * _status}.
   */
  Map<String, Object> complete(String prompt, int maxTokens) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("prompt", prompt);
    body.put("max_tokens", maxTokens);
    return RestClient.create()
        .post()
        .uri(url + "/v1/completions")
        .header("Content-Type", "application/json")
        .body(body)
        .exchange(
            (req, response) -> {
              Map<String, Object> answer = new LinkedHashMap<>(response.bodyTo(ChildNode.JSON));
              answer.put("_status", response.getStatusCode().value());
              return answer;
            });
  }

  /** The text of a served completion. */
  @SuppressWarnings("unchecked")
  static String text(Map<String, Object> body) {
    return (String) ((List<Map<String, Object>>) body.get("choices")).get(0).get("text");
  }

  @Override
  public void close() {
    context.close();
  }
}
