package io.kvbridge.sample.completions;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.sample.AllInOneServer;
import io.kvbridge.sample.HttpApi;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * Errors that no completion handler sees (an unknown path, a wrong method, content type or Accept
 * header) are answered in OpenAI's error shape too, in plain words, at the router and both nodes.
 */
@AllInOneServer
class HttpErrorShapeTest {

  private static final String REQUEST = "{\"prompt\": \"a prompt\", \"max_tokens\": 2}";

  @LocalServerPort int port;

  private HttpApi api;

  @BeforeEach
  void connect() {
    api = new HttpApi(port);
  }

  @Test
  void anUnknownPathIsANotFoundNamingIt() {
    HttpApi.Answer answer = api.get("/v1/nothing-here");

    assertThat(answer.errorMessage(404)).isEqualTo("there is no endpoint at GET /v1/nothing-here");
  }

  @Test
  void postingToAnUnknownPathIsANotFound() {
    HttpApi.Answer answer = api.post("/v2/completions", REQUEST);

    assertThat(answer.errorMessage(404)).isEqualTo("there is no endpoint at POST /v2/completions");
  }

  @ParameterizedTest
  @ValueSource(strings = {"/v1/completions", "/prefill/v1/completions", "/decode/v1/completions"})
  void getOnACompletionsEndpointIsAMethodNotAllowedNamingPost(String path) {
    HttpApi.Answer answer = api.get(path);

    assertThat(answer.errorMessage(405)).isEqualTo("GET is not allowed on " + path + "; use POST");
  }

  @Test
  void deleteOnTheCompletionsEndpointIsAMethodNotAllowedNamingDelete() {
    HttpApi.Answer answer = api.send("DELETE", "/v1/completions", null, null, null);

    assertThat(answer.errorMessage(405))
        .isEqualTo("DELETE is not allowed on /v1/completions; use POST");
  }

  @ParameterizedTest
  @ValueSource(strings = {"/v1/completions", "/prefill/v1/completions", "/decode/v1/completions"})
  void aBodyThatIsNotJsonByContentTypeIsAnUnsupportedMediaType(String path) {
    HttpApi.Answer answer = api.send("POST", path, "text/plain", null, REQUEST);

    assertThat(answer.errorMessage(415))
        .startsWith("Content-Type text/plain")
        .endsWith("send the body as application/json");
  }

  @Test
  void aRequestWithoutContentTypeIsAnUnsupportedMediaType() {
    HttpApi.Answer answer = api.send("POST", "/v1/completions", null, null, REQUEST);

    assertThat(answer.errorMessage(415)).startsWith("the request has no Content-Type");
  }

  @Test
  void anAcceptHeaderWithoutJsonIsANotAcceptableAnsweredInJsonAnyway() {
    HttpApi.Answer answer =
        api.send("POST", "/v1/completions", "application/json", "text/html", REQUEST);

    assertThat(answer.errorMessage(406)).contains("application/json");
  }

  @Test
  void theErrorPathItselfIsANotFound() {
    HttpApi.Answer answer = api.get("/error");

    assertThat(answer.errorMessage(404)).isEqualTo("there is no endpoint at GET /error");
  }
}
