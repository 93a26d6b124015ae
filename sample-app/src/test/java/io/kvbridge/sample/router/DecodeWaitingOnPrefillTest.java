package io.kvbridge.sample.router;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.sample.FaultInjection;
import io.kvbridge.sample.HttpApi;
import io.kvbridge.sample.node.Node;
import io.kvbridge.tck.faults.Faults;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import tools.jackson.databind.json.JsonMapper;

/**
 * A decode node whose request times out while its KV is still being read from a prefill node that
 * went quiet says so (504 {@code kv_load_timeout}, naming the prefill node), and the router does
 * not hold that against the decode node: it stays in the pool and serves the next request.
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "kvbridge.sample.prefill.engine-id=waiting-test-prefill",
      "kvbridge.sample.decode.engine-id=waiting-test-decode",
      "kvbridge.fake.fabric=decode-waiting-on-prefill-test",
      "kvbridge.sample.request-timeout=2s",
      "kvbridge.sample.router.drop-after-prefill=0",
      "kvbridge.sample.router.health-interval=1h",
      "kvbridge.sample.demo.enabled=false"
    })
@Import(FaultInjection.class)
class DecodeWaitingOnPrefillTest {

  private static final String PROMPT =
      "A prompt whose blocks the decode node reads from a prefill node that stops answering.";

  @LocalServerPort int port;

  @Autowired Faults faults;

  @Autowired PdRouter router;

  @Autowired
  @Qualifier("prefillNode")
  Node prefill;

  @AfterEach
  void clearFaults() {
    faults.clear();
    faults.unstallReads();
  }

  @Test
  void theDecodeNodeAnswers504KvLoadTimeoutNamingThePrefillNode() {
    HttpApi api = new HttpApi(port);
    Map<String, Object> params = prefilled(api, PROMPT + " Direct.");
    faults.stallNextReads(1);

    HttpApi.Answer answer =
        api.post(
            "/decode/v1/completions",
            json(Map.of("prompt", PROMPT + " Direct.", "kv_transfer_params", params)));

    assertThat(answer.error(504)).containsEntry("type", "kv_load_timeout");
    assertThat(answer.errorMessage(504))
        .startsWith("engine waiting-test-decode did not finish ")
        .contains("(kvbridge.sample.request-timeout)")
        .contains("still being loaded from prefill node waiting-test-prefill")
        .endsWith("the load was cancelled");
  }

  @Test
  void theRouterKeepsTheDecodeNodeInItsPoolAndItServesTheNextRequest() {
    HttpApi api = new HttpApi(port);
    faults.stallNextReads(1);

    HttpApi.Answer timedOut = api.post("/v1/completions", json(Map.of("prompt", PROMPT)));

    assertThat(timedOut.error(504)).containsEntry("type", "decode_failed");
    assertThat(timedOut.errorMessage(504)).contains("kv_load_timeout");
    assertThat(router.stats().decode())
        .singleElement()
        .satisfies(
            decode -> {
              assertThat(decode.healthy()).isTrue();
              assertThat(decode.failed()).isEqualTo(1);
            });
    // The cancelled load gave the lease back, or the router revoked it: nothing is stranded on P.
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(
                        prefill.engine().connector().status().producer().orElseThrow().liveLeases())
                    .isZero());

    faults.clear();
    HttpApi.Answer next = api.post("/v1/completions", json(Map.of("prompt", PROMPT + " Next.")));
    assertThat(next.status()).as(next.body()).isEqualTo(200);
  }

  private Map<String, Object> prefilled(HttpApi api, String prompt) {
    HttpApi.Answer answer =
        api.post(
            "/prefill/v1/completions",
            json(
                Map.of(
                    "prompt",
                    prompt,
                    "max_tokens",
                    1,
                    "kv_transfer_params",
                    Map.of("do_remote_decode", true))));
    @SuppressWarnings("unchecked")
    Map<String, Object> params = (Map<String, Object>) answer.json().get("kv_transfer_params");
    assertThat(params).as(answer.body()).isNotNull();
    return params;
  }

  private static String json(Map<String, Object> body) {
    return JsonMapper.shared().writeValueAsString(body);
  }
}
