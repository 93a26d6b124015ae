package io.kvbridge.sample.router;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.events.BlockHashes;
import io.kvbridge.events.CacheSnapshot;
import io.kvbridge.events.KvEventBatch;
import io.kvbridge.sample.HttpApi;
import io.kvbridge.sample.engine.ToyModel;
import io.kvbridge.sample.node.Node;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.json.JsonMapper;

/**
 * A node publishes what its prefix cache holds as KV events over HTTP (a snapshot and a stream of
 * Server-Sent Events), and the router, following them, sends a repeated prompt to the decode node
 * that holds it.
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "kvbridge.sample.prefill.engine-id=events-test-prefill",
      "kvbridge.sample.decode.engine-id=events-test-decode",
      "kvbridge.fake.fabric=kv-events-over-http-test",
      "kvbridge.sample.router.drop-after-prefill=0",
      "kvbridge.sample.router.health-interval=200ms",
      "kvbridge.sample.demo.enabled=false"
    })
class KvEventsOverHttpTest {

  private static final String PROMPT =
      "A conversation's first turn, long enough to fill several blocks of the decode node's cache.";

  private static final JsonMapper JSON = JsonMapper.builder().build();

  @LocalServerPort int port;

  @Autowired PdRouter router;

  @Autowired MeterRegistry meters;

  @Autowired
  @Qualifier("decodeNode")
  Node decode;

  @Test
  void aServedPromptsFullBlocksAreInTheDecodeNodesSnapshotAndStreamAndTheRouterSendsItBack()
      throws Exception {
    HttpApi api = new HttpApi(port);
    BlockHashes hashes =
        new BlockHashes(
            decode.engine().shape().model().model(), decode.engine().shape().tokensPerBlock());
    List<Long> promptBlocks = Arrays.stream(hashes.of(ToyModel.tokensOf(PROMPT))).boxed().toList();
    long before = decode.engine().kvEvents().sequence();

    assertThat(
            api.post("/v1/completions", json(Map.of("prompt", PROMPT, "max_tokens", 4))).status())
        .isEqualTo(200);

    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(snapshot(api).blockHashes()).containsAll(promptBlocks));
    List<KvEventBatch> streamed = readBatches("/decode/kv/events?after=" + before, 1);
    assertThat(streamed.get(0).sequence()).isEqualTo(before + 1);
    assertThat(streamed.get(0).engineId()).isEqualTo("events-test-decode");
    // The router's index catches up, and the same prompt goes to the node that holds it.
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(router.stats().prefixIndex().orElseThrow().index().blocks())
                    .isGreaterThanOrEqualTo(promptBlocks.size()));
    assertThat(
            api.post("/v1/completions", json(Map.of("prompt", PROMPT, "max_tokens", 4))).status())
        .isEqualTo(200);
    assertThat(router.stats().prefixRouted()).isPositive();
    assertThat(meters.get("kvbridge.router.prefix.index.blocks").gauge().value())
        .isGreaterThanOrEqualTo(promptBlocks.size());
    assertThat(
            meters
                .get("kvbridge.router.prefix.index.offered")
                .tag("outcome", "applied")
                .functionCounter()
                .count())
        .isPositive();
    assertThat(meters.get("kvbridge.router.prefix.routed").functionCounter().count()).isPositive();
    // Each node's engine counters on the info endpoint.
    @SuppressWarnings("unchecked")
    Map<String, Map<String, Object>> engines =
        (Map<String, Map<String, Object>>) api.get("/actuator/info").json().get("kvbridgeNodes");
    assertThat(engines.get("decode")).containsEntry("engineId", "events-test-decode");
    assertThat(((Number) engines.get("decode").get("completed")).longValue())
        .isGreaterThanOrEqualTo(2);
    assertThat(((Number) engines.get("prefill").get("computedTokens")).longValue()).isPositive();
    // The same index on the kvbridge endpoint, which the dashboard's panel reads.
    @SuppressWarnings("unchecked")
    Map<String, Object> index =
        (Map<String, Object>) api.get("/actuator/kvbridge").json().get("prefixIndex");
    assertThat(((Number) index.get("blocks")).longValue())
        .isGreaterThanOrEqualTo(promptBlocks.size());
    assertThat(((Number) index.get("cacheRouted")).longValue()).isPositive();
    assertThat(index.get("offered")).asInstanceOf(InstanceOfAssertFactories.MAP).containsKey("GAP");
  }

  @Test
  void aStreamWithoutAResumePointStartsWithTheNextBatch() throws Exception {
    HttpApi api = new HttpApi(port);
    long now = decode.engine().kvEvents().sequence();
    CompletableFuture<List<KvEventBatch>> first =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return readBatches("/decode/kv/events", 1);
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    // New prompts until the stream, open by then, has carried one of their batches.
    for (int i = 0; i < 50 && !first.isDone(); i++) {
      assertThat(
              api.post(
                      "/v1/completions",
                      json(
                          Map.of(
                              "prompt",
                              "Another conversation, prefix " + now + "/" + i,
                              "max_tokens",
                              2)))
                  .status())
          .isEqualTo(200);
      Thread.sleep(100);
    }

    assertThat(first.get(10, TimeUnit.SECONDS))
        .singleElement()
        .satisfies(batch -> assertThat(batch.sequence()).isGreaterThan(now));
  }

  @Test
  void aReaderAskingForBatchesTheNodeNeverPublishedIsToldToResync() throws Exception {
    HttpResponse<InputStream> response = open("/decode/kv/events?after=999999999");
    try (BufferedReader lines =
        new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
      assertThat(lines.readLine()).isEqualTo("event:resync");
    }
  }

  private CacheSnapshot snapshot(HttpApi api) {
    HttpApi.Answer answer = api.get("/decode/kv/events/snapshot");
    assertThat(answer.status()).isEqualTo(200);
    return CacheSnapshot.fromMap(answer.json());
  }

  /** The first {@code count} batches of the stream at {@code path}. */
  private List<KvEventBatch> readBatches(String path, int count) throws Exception {
    List<KvEventBatch> batches = new ArrayList<>();
    HttpResponse<InputStream> response = open(path);
    try (BufferedReader lines =
        new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
      for (String line = lines.readLine();
          line != null && batches.size() < count;
          line = lines.readLine()) {
        if (line.startsWith("data:")) {
          @SuppressWarnings("unchecked")
          Map<String, Object> map = JSON.readValue(line.substring("data:".length()), Map.class);
          batches.add(KvEventBatch.fromMap(map));
        }
      }
    }
    return batches;
  }

  private HttpResponse<InputStream> open(String path) throws Exception {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Accept", "text/event-stream")
                .timeout(Duration.ofSeconds(10))
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofInputStream());
  }

  private static String json(Map<String, Object> body) {
    return JSON.writeValueAsString(body);
  }
}
