package io.kvbridge.sample.completions;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The answer of {@code POST /v1/chat/completions}, after OpenAI's chat completions API, with the
 * same extensions as a {@link CompletionResponse}.
 *
 * @param id the completion's id, {@code chatcmpl-...}
 * @param object always {@code chat.completion}
 * @param created seconds since the epoch
 * @param model the model name from the request
 * @param choices exactly one choice
 * @param usage token counts; the prompt's are those of the chat's prompt ({@link ChatTemplate})
 * @param kvTransferParams as in a {@link CompletionResponse}
 * @param kvbridge as in a {@link CompletionResponse}
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ChatCompletionResponse(
    String id,
    String object,
    long created,
    @Nullable String model,
    List<Choice> choices,
    CompletionResponse.Usage usage,
    @JsonProperty("kv_transfer_params") @Nullable Map<String, Object> kvTransferParams,
    CompletionResponse.@Nullable KvInfo kvbridge) {

  /** Copies the choices. */
  public ChatCompletionResponse {
    choices = List.copyOf(choices);
  }

  /** The chat answer of {@code completion}, the completion of the chat's prompt. */
  public static ChatCompletionResponse of(CompletionResponse completion) {
    return new ChatCompletionResponse(
        chatId(completion.id()),
        "chat.completion",
        completion.created(),
        completion.model(),
        List.of(
            new Choice(0, new Message("assistant", completion.text()), finishReason(completion))),
        completion.usage(),
        completion.kvTransferParams(),
        completion.kvbridge());
  }

  /** The chat id of a completion's id: {@code cmpl-x} becomes {@code chatcmpl-x}. */
  static String chatId(String completionId) {
    return "chat" + completionId;
  }

  static String finishReason(CompletionResponse completion) {
    return completion.choices().isEmpty() ? "length" : completion.choices().get(0).finishReason();
  }

  /**
   * The generated message.
   *
   * @param index its position, always 0
   * @param message the assistant's message
   * @param finishReason {@code length}: the toy model always generates {@code max_tokens} tokens
   */
  public record Choice(
      int index, Message message, @JsonProperty("finish_reason") String finishReason) {}

  /**
   * A message of the answer.
   *
   * @param role always {@code assistant}
   * @param content the generated text
   */
  public record Message(String role, String content) {}
}
