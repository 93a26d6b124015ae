package io.kvbridge.sample.router;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.lease.EndReason;
import io.kvbridge.sample.FaultInjection;
import io.kvbridge.sample.completions.ClientConnection;
import io.kvbridge.sample.completions.CompletionRequest;
import io.kvbridge.sample.completions.CompletionResponse;
import io.kvbridge.sample.engine.ContextWindow;
import io.kvbridge.sample.engine.ToyModel;
import io.kvbridge.sample.node.Node;
import io.kvbridge.sample.node.NodeKind;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.tck.faults.Faults;
import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.web.client.RestClient;
import tools.jackson.databind.json.JsonMapper;

/**
 * The completions API of the router and both nodes, over HTTP on a running all-in-one server: the
 * happy path, and every failure answered with an HTTP error that says why.
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "kvbridge.sample.prefill.engine-id=errors-test-prefill",
      "kvbridge.sample.decode.engine-id=errors-test-decode",
      "kvbridge.fake.fabric=" + CompletionsErrorPathTest.FABRIC,
      "kvbridge.sample.router.drop-after-prefill=0",
      "kvbridge.sample.demo.enabled=false"
    })
@Import(FaultInjection.class)
class CompletionsErrorPathTest {

  static final String FABRIC = "completions-error-path-test";

  private static final ParameterizedTypeReference<Map<String, Object>> JSON =
      new ParameterizedTypeReference<>() {};

  private static final String PROMPT =
      "A prompt long enough to fill a few blocks of sixteen tokens each, and then some more.";

  @LocalServerPort int port;

  @Autowired Faults faults;

  @Autowired
  @Qualifier("prefillNode")
  Node prefill;

  @Test
  void theRouterAnswersWithTheDecodeNodesCompletionEqualToTheReference() {
    // A prompt no other test sends, so the decode node's prefix cache holds none of it.
    String prompt = "The happy path. " + PROMPT;
    Answer answer = post("/v1/completions", request(prompt, 7, null));

    assertThat(answer.status()).isEqualTo(200);
    assertThat(text(answer)).isEqualTo(ToyModel.standard().referenceCompletion(prompt, 7));
    assertThat(answer.body().get("kvbridge"))
        .isEqualTo(
            Map.of(
                "engine_id",
                "errors-test-decode",
                "kv_source",
                "LOADED",
                "cached_tokens",
                0,
                "loaded_tokens",
                prompt.length(),
                "computed_tokens",
                0));
  }

  @Test
  void thePrefillNodeReturnsTheFirstTokenAndTransferParams() {
    Answer answer =
        post("/prefill/v1/completions", request(PROMPT, 1, Map.of("do_remote_decode", true)));

    assertThat(answer.status()).isEqualTo(200);
    assertThat(text(answer).trim()).doesNotContain(" ");
    @SuppressWarnings("unchecked")
    Map<String, Object> params = (Map<String, Object>) answer.body().get("kv_transfer_params");
    TransferParams parsed = TransferParams.fromMap(params);
    assertThat(parsed.producerEngineId()).isEqualTo("errors-test-prefill");
    assertThat(parsed.toMap().keySet()).containsExactlyElementsOf(params.keySet());
  }

  @Test
  void aFailedLoadOnTheDecodeNodeIsABadGatewayWithTheReason() {
    faults.failNextReads(1, "injected read failure");

    Answer answer = post("/v1/completions", request(PROMPT, 4, null));

    assertThat(answer.status()).isEqualTo(502);
    assertThat(errorMessage(answer))
        .contains("decode node")
        .contains("kv_load_failed")
        .contains("injected read failure");
  }

  @Test
  void aFailedLoadOnTheDecodeNodeHasThePrefillNodesLeaseRevokedBeforeTheClientIsAnswered() {
    long revoked = prefillLeasesEnded(EndReason.REVOKED);
    faults.failNextReads(1, "injected read failure");

    Answer answer = post("/v1/completions", request(PROMPT, 4, null));

    assertThat(answer.status()).isEqualTo(502);
    assertThat(prefillLeasesEnded(EndReason.REVOKED)).isEqualTo(revoked + 1);
  }

  @Test
  void anUnreachableDecodeNodeIsABadGatewayNamingIt() {
    URI prefill = URI.create("http://127.0.0.1:" + port + "/prefill");
    URI nowhere = URI.create("http://127.0.0.1:1/decode");
    PdRouter router =
        new PdRouter(
            new NodeClient(
                JsonMapper.shared(),
                Duration.ofSeconds(2),
                Duration.ofSeconds(10),
                Duration.ofSeconds(1)),
            new ContextWindow(ContextWindow.DEFAULT_TOKENS),
            new NodePool(NodeKind.PREFILL, List.of(PooledNode.at(prefill, "/actuator/health"))),
            new NodePool(NodeKind.DECODE, List.of(PooledNode.at(nowhere, "/actuator/health"))),
            new DropAfterPrefill(0));

    CompletableFuture<CompletionResponse> routed =
        router.route(CompletionRequest.of("m", PROMPT, 3), ClientConnection.stays());

    assertThat(routed)
        .failsWithin(Duration.ofSeconds(30))
        .withThrowableOfType(ExecutionException.class)
        .havingCause()
        .isInstanceOfSatisfying(
            NodeCallFailedException.class, failure -> assertThat(failure.status()).isEqualTo(502))
        .withMessageContaining("decode node at " + nowhere);
    assertThat(router.stats().failed()).isEqualTo(1);
  }

  @Test
  void malformedTransferParamsOnTheDecodeNodeAreABadRequestNamingTheField() {
    Map<String, Object> params = new LinkedHashMap<>();
    params.put("producer_engine_id", "somewhere");

    Answer answer = post("/decode/v1/completions", request(PROMPT, 3, params));

    assertThat(answer.status()).isEqualTo(400);
    assertThat(errorMessage(answer)).contains("invalid kv_transfer_params").contains("request_id");
  }

  @Test
  void transferParamsWithNonIntegerBlockIdsAreABadRequest() {
    Map<String, Object> params = validParams();
    params.put("block_ids", List.of("zero"));

    Answer answer = post("/decode/v1/completions", request(PROMPT, 3, params));

    assertThat(answer.status()).isEqualTo(400);
    assertThat(errorMessage(answer)).contains("block_ids must hold integers");
  }

  @Test
  void transferParamsForMoreTokensThanThePromptAreABadRequest() {
    Map<String, Object> params = validParams();

    Answer answer = post("/decode/v1/completions", request("short", 3, params));

    assertThat(answer.status()).isEqualTo(400);
    assertThat(errorMessage(answer)).contains("exceed the prompt");
  }

  @Test
  void askingTheDecodeNodeToHoldKvIsABadRequest() {
    Answer answer =
        post("/decode/v1/completions", request(PROMPT, 3, Map.of("do_remote_decode", true)));

    assertThat(answer.status()).isEqualTo(400);
    assertThat(errorMessage(answer)).contains("do_remote_decode is for prefill nodes");
  }

  @Test
  void anEmptyPromptIsABadRequestAtTheRouter() {
    Answer answer = post("/v1/completions", request("", 3, null));

    assertThat(answer.status()).isEqualTo(400);
    assertThat(errorMessage(answer)).contains("prompt");
  }

  @Test
  void aBodyThatIsNotJsonIsABadRequest() {
    Answer answer = post("/v1/completions", "{not json");

    assertThat(answer.status()).isEqualTo(400);
    assertThat(errorMessage(answer)).startsWith("the body is not valid JSON");
  }

  private long prefillLeasesEnded(EndReason reason) {
    return prefill
        .engine()
        .connector()
        .status()
        .producer()
        .orElseThrow()
        .leasesEnded()
        .getOrDefault(reason, 0L);
  }

  private Map<String, Object> validParams() {
    Answer prefilled =
        post("/prefill/v1/completions", request(PROMPT, 1, Map.of("do_remote_decode", true)));
    @SuppressWarnings("unchecked")
    Map<String, Object> params =
        new LinkedHashMap<>((Map<String, Object>) prefilled.body().get("kv_transfer_params"));
    return params;
  }

  private static Map<String, Object> request(
      String prompt, int maxTokens, Map<String, Object> params) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("model", "test");
    body.put("prompt", prompt);
    body.put("max_tokens", maxTokens);
    if (params != null) {
      body.put("kv_transfer_params", params);
    }
    return body;
  }

  private Answer post(String path, Object body) {
    return RestClient.create("http://127.0.0.1:" + port)
        .post()
        .uri(path)
        .header("Content-Type", "application/json")
        .body(body)
        .exchange(
            (req, response) -> new Answer(response.getStatusCode().value(), response.bodyTo(JSON)));
  }

  private static String text(Answer answer) {
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> choices = (List<Map<String, Object>>) answer.body().get("choices");
    return (String) choices.get(0).get("text");
  }

  private static String errorMessage(Answer answer) {
    @SuppressWarnings("unchecked")
    Map<String, Object> error = (Map<String, Object>) answer.body().get("error");
    assertThat(error).as("error body of HTTP %d: %s", answer.status(), answer.body()).isNotNull();
    String message = (String) error.get("message");
    assertThat(message).doesNotContain("java.", "Exception").doesNotContainIgnoringCase("jackson");
    return message;
  }

  private record Answer(int status, Map<String, Object> body) {}
}
