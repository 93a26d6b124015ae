package io.kvbridge.sample.completions;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.sample.AllInOneServer;
import io.kvbridge.sample.HttpApi;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.json.JsonMapper;

/**
 * A completion request's fields must have their own JSON types: nothing is coerced. A field of
 * another type is a 400 naming the field and the type it must have, in plain words, at the router
 * and at both nodes.
 */
@AllInOneServer
class StrictJsonTypesTest {

  private static final String PROMPT = "\"a prompt for the strict reader\"";
  private static final String[] PATHS = {
    "/v1/completions", "/prefill/v1/completions", "/decode/v1/completions"
  };

  @LocalServerPort int port;
  @Autowired JsonMapper applicationMapper;

  private HttpApi api;

  @BeforeEach
  void connect() {
    api = new HttpApi(port);
  }

  @Test
  void aPromptThatIsABooleanIsABadRequest() {
    assertRefused("{\"prompt\": true, \"max_tokens\": 4}", "prompt", "prompt must be a string");
  }

  @Test
  void aPromptThatIsANumberIsABadRequest() {
    assertRefused("{\"prompt\": 42, \"max_tokens\": 4}", "prompt", "prompt must be a string");
  }

  @Test
  void aPromptThatIsAnArrayIsABadRequest() {
    assertRefused("{\"prompt\": [\"a\"], \"max_tokens\": 4}", "prompt", "prompt must be a string");
  }

  @Test
  void maxTokensInQuotesIsABadRequest() {
    assertRefused(
        "{\"prompt\": " + PROMPT + ", \"max_tokens\": \"8\"}",
        "max_tokens",
        "max_tokens must be an integer");
  }

  @Test
  void maxTokensWithAFractionIsABadRequest() {
    assertRefused(
        "{\"prompt\": " + PROMPT + ", \"max_tokens\": 8.5}",
        "max_tokens",
        "max_tokens must be an integer");
  }

  @Test
  void maxTokensInExponentNotationIsABadRequest() {
    assertRefused(
        "{\"prompt\": " + PROMPT + ", \"max_tokens\": 1e8}",
        "max_tokens",
        "max_tokens must be an integer");
  }

  @Test
  void maxTokensThatIsABooleanIsABadRequest() {
    assertRefused(
        "{\"prompt\": " + PROMPT + ", \"max_tokens\": true}",
        "max_tokens",
        "max_tokens must be an integer");
  }

  @Test
  void maxTokensBeyondTheIntegerRangeIsABadRequest() {
    assertRefused(
        "{\"prompt\": " + PROMPT + ", \"max_tokens\": 99999999999}",
        "max_tokens",
        "max_tokens is out of range");
  }

  @Test
  void streamInQuotesIsABadRequest() {
    assertRefused(
        "{\"prompt\": " + PROMPT + ", \"stream\": \"false\"}",
        "stream",
        "stream must be a boolean");
  }

  @Test
  void streamAsANumberIsABadRequest() {
    assertRefused(
        "{\"prompt\": " + PROMPT + ", \"stream\": 0}", "stream", "stream must be a boolean");
  }

  @Test
  void kvTransferParamsThatAreAStringAreABadRequest() {
    assertRefused(
        "{\"prompt\": " + PROMPT + ", \"kv_transfer_params\": \"do_remote_decode\"}",
        "kv_transfer_params",
        "kv_transfer_params must be an object");
  }

  @Test
  void aBodyThatIsAnArrayIsABadRequest() {
    HttpApi.Answer answer = api.post("/v1/completions", "[]");

    assertThat(answer.errorMessage(400)).isEqualTo("the body must be a single JSON object");
  }

  @Test
  void aSecondValueAfterTheRequestObjectIsABadRequest() {
    HttpApi.Answer answer = api.post("/v1/completions", "{\"prompt\": " + PROMPT + "} {}");

    assertThat(answer.errorMessage(400)).isEqualTo("the body must be a single JSON object");
  }

  @Test
  void anEmptyBodyIsABadRequest() {
    HttpApi.Answer answer = api.post("/v1/completions", "");

    assertThat(answer.errorMessage(400)).startsWith("the body must be a single JSON object");
  }

  @Test
  void aBodyThatIsNotJsonIsABadRequestSayingSo() {
    HttpApi.Answer answer = api.post("/prefill/v1/completions", "{prompt: \"unquoted name\"}");

    assertThat(answer.errorMessage(400)).startsWith("the body is not valid JSON");
  }

  @Test
  void everyFieldOfItsOwnTypeIsServed() {
    HttpApi.Answer answer =
        api.post(
            "/decode/v1/completions",
            "{\"model\": \"m\", \"prompt\": "
                + PROMPT
                + ", \"max_tokens\": 3, \"stream\": false, \"kv_transfer_params\": {}}");

    assertThat(answer.status()).as(answer.body()).isEqualTo(200);
  }

  @Test
  void theApplicationsOwnMapperKeepsItsSettings() {
    Integer coerced = applicationMapper.readValue("\"8\"", Integer.class);

    assertThat(coerced).isEqualTo(8);
  }

  private void assertRefused(String json, String param, String message) {
    for (String path : PATHS) {
      HttpApi.Answer answer = api.post(path, json);

      assertThat(answer.error(400)).as(path).containsEntry("param", param);
      assertThat(answer.errorMessage(400)).as(path).startsWith(message);
    }
  }
}
