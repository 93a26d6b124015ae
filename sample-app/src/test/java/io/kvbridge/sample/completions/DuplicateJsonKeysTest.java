package io.kvbridge.sample.completions;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.sample.AllInOneServer;
import io.kvbridge.sample.HttpApi;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * A key given twice in one JSON object, at any depth of any body the router or a node reads, is a
 * 400 in OpenAI's error shape naming the key: neither value is taken.
 */
@AllInOneServer
class DuplicateJsonKeysTest {

  private static final List<String> COMPLETIONS =
      List.of("/v1/completions", "/prefill/v1/completions", "/decode/v1/completions");
  private static final List<String> CHATS =
      List.of(
          "/v1/chat/completions", "/prefill/v1/chat/completions", "/decode/v1/chat/completions");

  @LocalServerPort int port;

  private HttpApi api;

  @BeforeEach
  void connect() {
    api = new HttpApi(port);
  }

  @Test
  void maxTokensGivenTwiceIsABadRequestNamingIt() {
    assertRefused(
        COMPLETIONS,
        "{\"prompt\": \"twice\", \"max_tokens\": 100000000, \"max_tokens\": 1}",
        "max_tokens");
  }

  @Test
  void maxTokensGivenTwiceWithTheSameValueIsABadRequestToo() {
    assertRefused(
        COMPLETIONS, "{\"prompt\": \"twice\", \"max_tokens\": 1, \"max_tokens\": 1}", "max_tokens");
  }

  @Test
  void aKeyGivenTwiceInsideKvTransferParamsIsABadRequestNamingItsPath() {
    assertRefused(
        COMPLETIONS,
        "{\"prompt\": \"twice\", \"kv_transfer_params\":"
            + " {\"do_remote_decode\": true, \"do_remote_decode\": false}}",
        "kv_transfer_params.do_remote_decode");
  }

  @Test
  void aKeyGivenTwiceInAChatMessageIsABadRequestNamingItsPath() {
    assertRefused(
        CHATS,
        "{\"messages\": [{\"role\": \"user\", \"role\": \"system\", \"content\": \"hi\"}]}",
        "messages[0].role");
  }

  @Test
  void aKeyGivenTwiceInARevokeIsABadRequestNamingIt() {
    assertRefused(
        List.of("/prefill/v1/leases/revoke"),
        "{\"request_id\": \"cmpl-a\", \"request_id\": \"cmpl-b\"}",
        "request_id");
  }

  @Test
  void theSameKeyInTwoDifferentObjectsIsServed() {
    HttpApi.Answer answer =
        api.post(
            "/v1/chat/completions",
            "{\"max_tokens\": 2, \"messages\": [{\"role\": \"user\", \"content\": \"one\"},"
                + " {\"role\": \"assistant\", \"content\": \"two\"}]}");

    assertThat(answer.status()).as(answer.body()).isEqualTo(200);
  }

  private void assertRefused(List<String> paths, String json, String key) {
    for (String path : paths) {
      HttpApi.Answer answer = api.post(path, json);

      assertThat(answer.error(400))
          .as(path)
          .containsEntry("type", "invalid_request_error")
          .containsEntry("param", key);
      assertThat(answer.errorMessage(400))
          .as(path)
          .isEqualTo(key + " is given more than once; give each key of an object once");
    }
  }
}
