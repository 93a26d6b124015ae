package io.kvbridge.sample.completions;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.sample.AllInOneServer;
import io.kvbridge.sample.HttpApi;
import io.kvbridge.sample.engine.ToyModel;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.json.JsonMapper;

/**
 * The OpenAI API as its clients use it, at the router and at both nodes: completions answered whole
 * or as a stream of server-sent events, chat completions through the chat template, and the list of
 * models. A stream says what the whole answer says: its pieces make the same text, which is the
 * colocated reference, and it ends with {@code [DONE]}.
 */
@AllInOneServer
class OpenAiApiTest {

  private static final List<Map<String, String>> CHAT =
      List.of(
          Map.of("role", "system", "content", "You answer in the toy model's words."),
          Map.of("role", "user", "content", "Where does the cache block go after prefill?"));

  @LocalServerPort int port;

  private HttpApi api;

  @BeforeEach
  void connect() {
    api = new HttpApi(port);
  }

  @Test
  void aStreamedCompletionThroughTheRouterHasTheTextOfTheWholeAnswerAndTheReference() {
    String prompt = "A streamed completion through the router, prefilled and decoded apart.";
    String whole = api.post("/v1/completions", completion(prompt, 7, null)).text();

    List<Map<String, Object>> chunks =
        api.stream("/v1/completions", completion(prompt, 7, true)).chunks();

    assertThat(chunks).hasSize(7);
    assertThat(textOf(chunks))
        .isEqualTo(whole)
        .isEqualTo(ToyModel.standard().referenceCompletion(prompt, 7));
    assertThat(chunks)
        .allSatisfy(chunk -> assertThat(chunk).containsEntry("object", "text_completion"))
        .allSatisfy(chunk -> assertThat(chunk).doesNotContainKey("usage"))
        .extracting(chunk -> chunk.get("id"))
        .containsOnly(chunks.get(0).get("id"));
    assertThat(chunks.subList(0, 6))
        .allSatisfy(chunk -> assertThat(choice(chunk)).containsEntry("finish_reason", null));
    assertThat(choice(chunks.get(6))).containsEntry("finish_reason", "length");
    assertThat(chunks.get(6)).containsKey("kvbridge");
  }

  @Test
  void aStreamThatAsksForUsageEndsWithAChunkOfTokenCountsAndNoChoices() {
    String prompt = "Count my tokens at the end of the stream.";
    Map<String, Object> body = new LinkedHashMap<>(Map.of("prompt", prompt, "max_tokens", 3));
    body.put("stream", true);
    body.put("stream_options", Map.of("include_usage", true));

    List<Map<String, Object>> chunks = api.stream("/v1/completions", json(body)).chunks();

    assertThat(chunks).hasSize(4);
    assertThat(textOf(chunks.subList(0, 3)))
        .isEqualTo(ToyModel.standard().referenceCompletion(prompt, 3));
    Map<String, Object> usage = chunks.get(3);
    assertThat(usage.get("choices")).asInstanceOf(InstanceOfAssertFactories.LIST).isEmpty();
    assertThat(usage.get("usage"))
        .isEqualTo(
            Map.of(
                "prompt_tokens",
                ToyModel.tokenCount(prompt),
                "completion_tokens",
                3,
                "total_tokens",
                ToyModel.tokenCount(prompt) + 3));
  }

  @Test
  void eachNodeStreamsACompletionOfItsOwn() {
    String prompt = "A node that streams on its own, with no router in front.";
    for (String path : List.of("/prefill/v1/completions", "/decode/v1/completions")) {
      List<Map<String, Object>> chunks = api.stream(path, completion(prompt, 5, true)).chunks();

      assertThat(textOf(chunks))
          .as(path)
          .isEqualTo(ToyModel.standard().referenceCompletion(prompt, 5));
    }
  }

  @Test
  void aChatThroughTheRouterIsAnsweredWithTheCompletionOfItsPrompt() {
    HttpApi.Answer answer = api.post("/v1/chat/completions", chat(6));

    assertThat(answer.status()).as(answer.body()).isEqualTo(200);
    Map<String, Object> json = answer.json();
    assertThat(json).containsEntry("object", "chat.completion");
    assertThat((String) json.get("id")).startsWith("chatcmpl-");
    Map<String, Object> choice = choice(json);
    assertThat(choice).containsEntry("finish_reason", "length");
    assertThat(choice.get("message"))
        .isEqualTo(Map.of("role", "assistant", "content", chatReference(6)));
    assertThat(json.get("usage"))
        .extracting("prompt_tokens")
        .isEqualTo(ToyModel.tokenCount(ChatTemplate.prompt(messages())));
  }

  @Test
  void aStreamedChatThroughTheRouterStartsWithTheRoleAndEndsWithTheFinishReasonAndUsage() {
    Map<String, Object> body = new LinkedHashMap<>(Map.of("messages", CHAT, "max_tokens", 4));
    body.put("stream", true);
    body.put("stream_options", Map.of("include_usage", true));

    List<Map<String, Object>> chunks = api.stream("/v1/chat/completions", json(body)).chunks();

    // The role, four pieces, the finish, the usage.
    assertThat(chunks).hasSize(7);
    assertThat(chunks)
        .allSatisfy(chunk -> assertThat(chunk).containsEntry("object", "chat.completion.chunk"));
    assertThat(delta(chunks.get(0))).isEqualTo(Map.of("role", "assistant", "content", ""));
    StringBuilder content = new StringBuilder();
    for (Map<String, Object> chunk : chunks.subList(1, 5)) {
      assertThat(delta(chunk)).containsOnlyKeys("content");
      assertThat(choice(chunk)).containsEntry("finish_reason", null);
      content.append(delta(chunk).get("content"));
    }
    assertThat(content.toString()).isEqualTo(chatReference(4));
    assertThat(delta(chunks.get(5))).isEmpty();
    assertThat(choice(chunks.get(5))).containsEntry("finish_reason", "length");
    assertThat(chunks.get(6).get("choices")).asInstanceOf(InstanceOfAssertFactories.LIST).isEmpty();
    assertThat(chunks.get(6).get("usage")).extracting("completion_tokens").isEqualTo(4);
  }

  @Test
  void eachNodeAnswersAChat() {
    for (String path : List.of("/prefill/v1/chat/completions", "/decode/v1/chat/completions")) {
      HttpApi.Answer answer = api.post(path, chat(3));

      assertThat(answer.status()).as(answer.body()).isEqualTo(200);
      assertThat(choice(answer.json()).get("message"))
          .as(path)
          .isEqualTo(Map.of("role", "assistant", "content", chatReference(3)));
    }
  }

  @Test
  void theRouterAndEachNodeListTheToyModel() {
    for (String path : List.of("/v1/models", "/prefill/v1/models", "/decode/v1/models")) {
      HttpApi.Answer answer = api.get(path);

      assertThat(answer.status()).as(path).isEqualTo(200);
      assertThat(answer.json()).as(path).containsEntry("object", "list");
      assertThat(answer.json().get("data"))
          .as(path)
          .asInstanceOf(InstanceOfAssertFactories.LIST)
          .singleElement()
          .isEqualTo(
              Map.of("id", ToyModel.NAME, "object", "model", "created", 0, "owned_by", "kvbridge"));
    }
  }

  @Test
  void aStreamedRequestThatFailsIsAnsweredWithAnErrorAndNoStream() {
    HttpApi.Answer answer =
        api.post("/v1/completions", "{\"prompt\": \"\", \"stream\": true, \"max_tokens\": 2}");

    assertThat(answer.error(400)).containsEntry("param", "prompt");
  }

  @Test
  void theTextOfAStreamIsCutBeforeEachSpace() {
    assertThat(OpenAiAnswers.pieces(" the cache block"))
        .containsExactly(" the", " cache", " block");
    assertThat(OpenAiAnswers.pieces("a b")).containsExactly("a", " b");
    assertThat(OpenAiAnswers.pieces("")).isEmpty();
  }

  private static String chatReference(int maxTokens) {
    return ToyModel.standard().referenceCompletion(ChatTemplate.prompt(messages()), maxTokens);
  }

  private static List<ChatMessage> messages() {
    return CHAT.stream().map(m -> new ChatMessage(m.get("role"), m.get("content"))).toList();
  }

  private static String completion(String prompt, int maxTokens, @Nullable Boolean stream) {
    Map<String, Object> body =
        new LinkedHashMap<>(Map.of("prompt", prompt, "max_tokens", maxTokens));
    if (stream != null) {
      body.put("stream", stream);
    }
    return json(body);
  }

  private static String chat(int maxTokens) {
    return json(Map.of("messages", CHAT, "max_tokens", maxTokens));
  }

  private static String json(Object body) {
    return JsonMapper.shared().writeValueAsString(body);
  }

  private static String textOf(List<Map<String, Object>> chunks) {
    StringBuilder text = new StringBuilder();
    chunks.forEach(chunk -> text.append(choice(chunk).get("text")));
    return text.toString();
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> choice(Map<String, Object> answer) {
    return (Map<String, Object>) ((List<?>) answer.get("choices")).get(0);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> delta(Map<String, Object> chunk) {
    return (Map<String, Object>) choice(chunk).get("delta");
  }
}
