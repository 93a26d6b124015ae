package io.kvbridge.sample.completions;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.sample.AllInOneServer;
import io.kvbridge.sample.HttpApi;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * A malformed chat or stream request is a 400 in OpenAI's error shape naming the field at fault and
 * what it accepts, at the router and at both nodes, before any engine works on it.
 */
@AllInOneServer
class OpenAiBadInputTest {

  private static final List<String> CHATS =
      List.of(
          "/v1/chat/completions", "/prefill/v1/chat/completions", "/decode/v1/chat/completions");
  private static final List<String> COMPLETIONS =
      List.of("/v1/completions", "/prefill/v1/completions", "/decode/v1/completions");
  private static final String USER = "{\"role\": \"user\", \"content\": \"hello\"}";

  @LocalServerPort int port;

  private HttpApi api;

  @BeforeEach
  void connect() {
    api = new HttpApi(port);
  }

  @Test
  void aChatWithoutMessagesIsABadRequestNamingMessages() {
    assertRefused(CHATS, "{\"max_tokens\": 2}", "messages", "messages must be a non-empty array");
  }

  @Test
  void aChatWithAnEmptyArrayOfMessagesIsABadRequestNamingMessages() {
    assertRefused(CHATS, "{\"messages\": []}", "messages", "messages must be a non-empty array");
  }

  @Test
  void messagesThatAreNotAnArrayAreABadRequest() {
    assertRefused(CHATS, "{\"messages\": \"hello\"}", "messages", "messages must be an array");
  }

  @Test
  void aMessageOfAnUnknownRoleIsABadRequestNamingTheMessagesRole() {
    assertRefused(
        CHATS,
        "{\"messages\": [" + USER + ", {\"role\": \"wizard\", \"content\": \"hi\"}]}",
        "messages[1].role",
        "messages[1].role must be one of system, user, assistant; got \"wizard\"");
  }

  @Test
  void aMessageWithoutARoleIsABadRequestNamingIt() {
    assertRefused(
        CHATS,
        "{\"messages\": [{\"content\": \"hi\"}]}",
        "messages[0].role",
        "messages[0].role must be one of system, user, assistant");
  }

  @Test
  void aMessageWithoutContentIsABadRequestNamingIt() {
    assertRefused(
        CHATS,
        "{\"messages\": [{\"role\": \"user\"}]}",
        "messages[0].content",
        "messages[0].content must be a string");
  }

  @Test
  void aMessageWhoseContentIsNotAStringIsABadRequestNamingIt() {
    assertRefused(
        CHATS,
        "{\"messages\": [{\"role\": \"user\", \"content\": 42}]}",
        "messages[0].content",
        "messages[0].content must be a string");
  }

  @Test
  void aMessageThatIsNotAnObjectIsABadRequestNamingIt() {
    assertRefused(
        CHATS,
        "{\"messages\": [" + USER + ", null]}",
        "messages[1]",
        "messages[1] must be an object");
  }

  @Test
  void aChatWithBothMaxTokensAndMaxCompletionTokensIsABadRequest() {
    assertRefused(
        CHATS,
        "{\"messages\": [" + USER + "], \"max_tokens\": 2, \"max_completion_tokens\": 2}",
        "max_completion_tokens",
        "give max_tokens or max_completion_tokens, not both");
  }

  @Test
  void aChatThatAsksForNoTokensIsABadRequestNamingTheFieldItUsed() {
    assertRefused(
        CHATS,
        "{\"messages\": [" + USER + "], \"max_completion_tokens\": 0}",
        "max_completion_tokens",
        "max_completion_tokens must be at least 1, got 0");
  }

  @Test
  void aChatBeyondTheContextIsABadRequestNamingTheCompletionsField() {
    assertRefused(
        CHATS,
        "{\"messages\": [" + USER + "], \"max_completion_tokens\": 2147483647}",
        "max_completion_tokens",
        "max_completion_tokens is 2147483647 but the model's context");
  }

  @Test
  void aChatTooLongForTheContextIsABadRequestNamingMessages() {
    assertRefused(
        CHATS,
        "{\"messages\": [{\"role\": \"user\", \"content\": \"" + "a".repeat(9000) + "\"}]}",
        "messages",
        "messages are too long: their prompt in the chat template has 9024 tokens");
  }

  @Test
  void streamThatIsNotABooleanIsABadRequestInAChatToo() {
    assertRefused(
        CHATS,
        "{\"messages\": [" + USER + "], \"stream\": \"true\"}",
        "stream",
        "stream must be a boolean");
  }

  @Test
  void streamOptionsWithoutStreamAreABadRequest() {
    String options = ", \"stream_options\": {\"include_usage\": true}";
    assertRefused(
        COMPLETIONS,
        "{\"prompt\": \"p\"" + options + "}",
        "stream_options",
        "stream_options is only allowed with stream=true");
    assertRefused(
        CHATS,
        "{\"messages\": [" + USER + "], \"stream\": false" + options + "}",
        "stream_options",
        "stream_options is only allowed with stream=true");
  }

  @Test
  void streamOptionsThatAreNotAnObjectAreABadRequest() {
    assertRefused(
        COMPLETIONS,
        "{\"prompt\": \"p\", \"stream\": true, \"stream_options\": true}",
        "stream_options",
        "stream_options must be an object");
  }

  @Test
  void includeUsageThatIsNotABooleanIsABadRequest() {
    assertRefused(
        COMPLETIONS,
        "{\"prompt\": \"p\", \"stream\": true, \"stream_options\": {\"include_usage\": 1}}",
        "stream_options.include_usage",
        "stream_options.include_usage must be a boolean");
  }

  @Test
  void modelsAreListedOnGetOnly() {
    assertThat(api.post("/v1/models", "{}").errorMessage(405)).contains("use GET");
  }

  private void assertRefused(List<String> paths, String json, String param, String message) {
    for (String path : paths) {
      HttpApi.Answer answer = api.post(path, json);

      assertThat(answer.error(400)).as(path).containsEntry("param", param);
      assertThat(answer.errorMessage(400)).as(path).startsWith(message);
    }
  }
}
