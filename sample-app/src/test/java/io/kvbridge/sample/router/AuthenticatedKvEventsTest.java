package io.kvbridge.sample.router;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.events.CacheSnapshot;
import io.kvbridge.events.EventAuthenticator;
import io.kvbridge.events.KvEventBatch;
import io.kvbridge.events.PrefixIndex;
import io.kvbridge.net.HandshakeSecret;
import io.kvbridge.sample.HttpApi;
import io.kvbridge.sample.node.Node;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.json.JsonMapper;

/**
 * With the deployment's secret set, every node signs its KV events, the router applies only what
 * carries a valid {@code mac}, and a reader with another secret (or none on the node) refuses and
 * counts everything.
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "kvbridge.handshake.secret=" + AuthenticatedKvEventsTest.SECRET,
      "kvbridge.sample.prefill.engine-id=signed-events-prefill",
      "kvbridge.sample.decode.engine-id=signed-events-decode",
      "kvbridge.fake.fabric=authenticated-kv-events-test",
      "kvbridge.sample.router.drop-after-prefill=0",
      "kvbridge.sample.router.health-interval=200ms",
      "kvbridge.sample.demo.enabled=false"
    })
class AuthenticatedKvEventsTest {

  static final String SECRET = "the signed events test's deployment secret";

  private static final EventAuthenticator AUTH = new EventAuthenticator(HandshakeSecret.of(SECRET));
  private static final JsonMapper JSON = JsonMapper.builder().build();

  @LocalServerPort int port;

  @Autowired PdRouter router;

  @Autowired
  @Qualifier("decodeNode")
  Node decode;

  @Test
  void theNodesSignTheirEventsAndTheRouterAppliesThem() throws Exception {
    HttpApi api = new HttpApi(port);
    long before = decode.engine().kvEvents().sequence();
    String prompt = "Signed events: a prompt long enough to fill a few blocks of the cache.";
    assertThat(api.post("/v1/completions", request(prompt)).status()).isEqualTo(200);

    Map<String, Object> snapshot = api.get("/decode/kv/events/snapshot").json();
    assertThat(AUTH.verify(CacheSnapshot.fromMap(snapshot), snapshot)).isTrue();
    Map<String, Object> batch = firstBatch("/decode/kv/events?after=" + before);
    assertThat(AUTH.verify(KvEventBatch.fromMap(batch), batch)).isTrue();
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(router.stats().prefixIndex().orElseThrow().index().blocks())
                    .isPositive());
    assertThat(router.stats().prefixIndex().orElseThrow().unauthenticated()).isZero();
  }

  @Test
  void aReaderWithAnotherSecretRefusesAndCountsEverySnapshotAndAppliesNothing() {
    PrefixIndex index =
        new PrefixIndex(
            decode.engine().shape().model().model(), decode.engine().shape().tokensPerBlock());
    EventAuthenticator other =
        new EventAuthenticator(HandshakeSecret.of("a secret of another deployment"));
    try (KvEventFeeds feeds =
        new KvEventFeeds(
            index, JSON, Duration.ofSeconds(2), Duration.ofMillis(50), Optional.of(other))) {
      feeds.follow(
          List.of(PooledNode.at(URI.create("http://127.0.0.1:" + port + "/decode"), "/health")));

      await().atMost(Duration.ofSeconds(10)).until(() -> feeds.unauthenticated() >= 2);
      assertThat(index.stats().engines()).isZero();
      assertThat(index.stats().blocks()).isZero();
      assertThat(feeds.unreachable()).isZero();
    }
  }

  /** The JSON of the first batch of the stream at {@code path}. */
  private Map<String, Object> firstBatch(String path) throws Exception {
    HttpResponse<InputStream> response =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .header("Accept", "text/event-stream")
                    .timeout(Duration.ofSeconds(10))
                    .GET()
                    .build(),
                HttpResponse.BodyHandlers.ofInputStream());
    try (BufferedReader lines =
        new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
      for (String line = lines.readLine(); line != null; line = lines.readLine()) {
        if (line.startsWith("data:")) {
          @SuppressWarnings("unchecked")
          Map<String, Object> map = JSON.readValue(line.substring("data:".length()), Map.class);
          return map;
        }
      }
    }
    throw new AssertionError("the stream at " + path + " ended without a batch");
  }

  private static String request(String prompt) {
    return JSON.writeValueAsString(Map.of("prompt", prompt, "max_tokens", 3));
  }
}
