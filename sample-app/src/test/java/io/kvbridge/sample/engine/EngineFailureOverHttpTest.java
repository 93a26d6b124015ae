package io.kvbridge.sample.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.sample.FaultInjection;
import io.kvbridge.sample.HttpApi;
import io.kvbridge.sample.node.Node;
import io.kvbridge.tck.faults.Faults;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.test.annotation.DirtiesContext;
import tools.jackson.databind.json.JsonMapper;

/**
 * The decode engine's step loop dies (out of memory, injected) while a request is loading: that
 * request and every later one are answered 503 at once, not after the request timeout, and the
 * health endpoint says which engine is down and why.
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "kvbridge.sample.prefill.engine-id=failure-test-prefill",
      "kvbridge.sample.decode.engine-id=failure-test-decode",
      "kvbridge.fake.fabric=" + EngineFailureOverHttpTest.FABRIC,
      "kvbridge.sample.router.drop-after-prefill=0",
      // No probe finds the decode node down first: the router calls it, and reports its answer.
      "kvbridge.sample.router.health-interval=1h",
      "kvbridge.sample.demo.enabled=false"
    })
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DirtiesContext
@Import(FaultInjection.class)
class EngineFailureOverHttpTest {

  static final String FABRIC = "engine-failure-over-http-test";

  private static final String PROMPT =
      "A prompt long enough to fill a few blocks of sixteen tokens each, and then some more.";
  private static final String CAUSE = "injected: Java heap space";

  @LocalServerPort int port;

  @Autowired
  @Qualifier("decodeNode")
  Node decode;

  @Autowired Faults faults;

  private HttpApi api;
  private HttpApi.Answer loadingWhenItDied;

  @BeforeAll
  void killTheDecodeEngineWhileARequestIsLoading() throws Exception {
    api = new HttpApi(port);
    Map<String, Object> prefilled =
        api.post("/prefill/v1/completions", request(Map.of("do_remote_decode", true))).json();
    faults.stallNextReads(1);
    CompletableFuture<HttpApi.Answer> loading =
        CompletableFuture.supplyAsync(
            () -> api.post("/decode/v1/completions", request(prefilled.get("kv_transfer_params"))));
    await().until(() -> decode.engine().stats().loading() == 1);

    decode
        .engine()
        .injectIntoNextStep(
            () -> {
              throw new OutOfMemoryError(CAUSE);
            });

    loadingWhenItDied = loading.get(2, TimeUnit.MINUTES);
  }

  @Test
  void theRequestLoadingWhenTheEngineDiedIsAnsweredServiceUnavailableNamingEngineAndCause() {
    Map<String, Object> error = loadingWhenItDied.error(503);

    assertThat(error).containsEntry("type", "engine_failed");
    assertThat((String) error.get("message")).contains("failure-test-decode").contains(CAUSE);
  }

  @Test
  void aLaterRequestToTheDeadEngineIsAnsweredServiceUnavailable() {
    HttpApi.Answer answer = api.post("/decode/v1/completions", request(null));

    assertThat(answer.error(503)).containsEntry("type", "engine_failed");
  }

  @Test
  void aLaterRequestThroughTheRouterIsABadGatewayNamingTheFailedEngine() {
    HttpApi.Answer answer = api.post("/v1/completions", request(null));

    assertThat(answer.errorMessage(502)).contains("engine_failed").contains(CAUSE);
  }

  @Test
  void healthIsDownForTheDeadEngineWithTheReasonAndUpForTheOther() {
    HttpApi.Answer health = api.get("/actuator/health");

    assertThat(health.status()).isEqualTo(503);
    Map<String, Object> components = map(health.json(), "components");
    Map<String, Object> decodeEngine = map(components, "decodeEngine");
    assertThat(decodeEngine).containsEntry("status", "DOWN");
    assertThat(map(decodeEngine, "details"))
        .containsEntry("engineId", "failure-test-decode")
        .hasEntrySatisfying("reason", reason -> assertThat((String) reason).contains(CAUSE));
    assertThat(map(components, "prefillEngine")).containsEntry("status", "UP");
  }

  private static String request(Object params) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("prompt", PROMPT);
    body.put("max_tokens", 4);
    if (params != null) {
      body.put("kv_transfer_params", params);
    }
    return JsonMapper.shared().writeValueAsString(body);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Map<String, Object> json, String key) {
    assertThat(json).containsKey(key);
    return (Map<String, Object>) json.get(key);
  }
}
