package io.kvbridge.sample.completions;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.sample.AllInOneServer;
import io.kvbridge.sample.HttpApi;
import io.kvbridge.sample.engine.ToyModel;
import io.kvbridge.sample.node.Node;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * Every request must fit the model's context ({@code kvbridge.sample.engine.max-context-tokens},
 * 8192 by default): prompt tokens plus {@code max_tokens}. Beyond it, the router and both nodes
 * answer 400 naming the field and the limit before any engine works on it, and the engines go on
 * serving.
 */
@AllInOneServer
class ContextLimitTest {

  private static final String PROMPT =
      "A prompt of a few blocks, for the engines to serve. ".repeat(2);
  private static final int CONTEXT = 8192;

  @LocalServerPort int port;

  @Autowired
  @Qualifier("prefillNode")
  Node prefill;

  private HttpApi api;

  @BeforeEach
  void connect() {
    api = new HttpApi(port);
  }

  @Test
  void maxTokensOfTheLargestIntegerToTheDecodeNodeIsABadRequestAndItServesTheNextRequest() {
    HttpApi.Answer refused = api.post("/decode/v1/completions", request(PROMPT, "2147483647"));

    assertThat(refused.error(400)).containsEntry("param", "max_tokens");
    assertThat(refused.errorMessage(400)).contains(String.valueOf(CONTEXT));
    assertThat(api.post("/decode/v1/completions", request(PROMPT, "5")).text())
        .isEqualTo(reference(5));
  }

  @Test
  void maxTokensOfTheLargestIntegerToThePrefillNodeIsABadRequestAndItServesTheNextRequest() {
    HttpApi.Answer refused = api.post("/prefill/v1/completions", request(PROMPT, "2147483647"));

    assertThat(refused.error(400)).containsEntry("param", "max_tokens");
    assertThat(refused.errorMessage(400)).contains(String.valueOf(CONTEXT));
    assertThat(api.post("/prefill/v1/completions", request(PROMPT, "5")).text())
        .isEqualTo(reference(5));
  }

  @Test
  void maxTokensOfTheLargestIntegerThroughTheRouterIsABadRequestAndTheNodesServeTheNextRequest() {
    HttpApi.Answer refused = api.post("/v1/completions", request(PROMPT, "2147483647"));

    assertThat(refused.error(400)).containsEntry("param", "max_tokens");
    assertThat(refused.errorMessage(400)).contains(String.valueOf(CONTEXT));
    assertThat(api.post("/v1/completions", request(PROMPT, "5")).text()).isEqualTo(reference(5));
  }

  @Test
  void theRouterRefusesARequestBeyondTheContextWithoutCallingThePrefillNode() {
    long prefilled = prefill.engine().stats().completed();

    api.post("/v1/completions", request(PROMPT, String.valueOf(CONTEXT))).error(400);

    assertThat(prefill.engine().stats().completed()).isEqualTo(prefilled);
  }

  @Test
  void maxTokensOfAHundredMillionIsABadRequest() {
    HttpApi.Answer refused = api.post("/decode/v1/completions", request(PROMPT, "100000000"));

    assertThat(refused.error(400)).containsEntry("param", "max_tokens");
  }

  @Test
  void maxTokensBeyondWhatThePromptLeavesIsABadRequestSayingHowManyAreLeft() {
    int room = CONTEXT - PROMPT.length();

    HttpApi.Answer refused =
        api.post("/decode/v1/completions", request(PROMPT, String.valueOf(room + 1)));

    assertThat(refused.errorMessage(400)).contains("at most " + room);
  }

  @Test
  void maxTokensThatFillTheContextExactlyAreServed() {
    int room = CONTEXT - PROMPT.length();

    HttpApi.Answer served =
        api.post("/decode/v1/completions", request(PROMPT, String.valueOf(room)));

    assertThat(served.text()).isEqualTo(reference(room));
  }

  @Test
  void aPromptLongerThanTheContextIsABadRequestNamingPrompt() {
    HttpApi.Answer refused = api.post("/v1/completions", request("x".repeat(CONTEXT + 1), "1"));

    assertThat(refused.error(400)).containsEntry("param", "prompt");
    assertThat(refused.errorMessage(400)).contains(String.valueOf(CONTEXT));
  }

  @Test
  void aPromptThatFillsTheContextLeavesNoRoomAndIsABadRequestNamingPrompt() {
    HttpApi.Answer refused = api.post("/decode/v1/completions", request("x".repeat(CONTEXT), "1"));

    assertThat(refused.error(400)).containsEntry("param", "prompt");
  }

  private static String request(String prompt, String maxTokens) {
    return "{\"model\": \"test\", \"prompt\": \""
        + prompt
        + "\", \"max_tokens\": "
        + maxTokens
        + "}";
  }

  private static String reference(int maxTokens) {
    return ToyModel.standard().referenceCompletion(PROMPT, maxTokens);
  }
}
