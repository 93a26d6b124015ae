package io.kvbridge.sample.completions;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.kvbridge.sample.engine.ContextWindow;
import io.kvbridge.sample.engine.InvalidPromptException;
import io.kvbridge.sample.engine.ToyModel;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The body of {@code POST /v1/chat/completions}, after OpenAI's chat completions API (text messages
 * only), with vLLM's {@code kv_transfer_params} extension. Read as strictly as a {@link
 * CompletionRequest}; served as the completion of the chat's prompt ({@link ChatTemplate}).
 *
 * @param model the model name; echoed back, any value is accepted
 * @param messages the chat so far: a non-empty array of {@code {"role", "content"}}
 * @param maxTokens how many tokens to generate; {@value CompletionRequest#DEFAULT_MAX_TOKENS} when
 *     neither this nor {@code max_completion_tokens} is given
 * @param maxCompletionTokens OpenAI's newer name for {@code max_tokens}; give one of the two
 * @param stream as for a completion
 * @param streamOptions as for a completion
 * @param kvTransferParams as for a completion
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ChatCompletionRequest(
    @Nullable String model,
    @Nullable List<ChatMessage> messages,
    @JsonProperty("max_tokens") @Nullable Integer maxTokens,
    @JsonProperty("max_completion_tokens") @Nullable Integer maxCompletionTokens,
    @Nullable Boolean stream,
    @JsonProperty("stream_options") @Nullable StreamOptions streamOptions,
    @JsonProperty("kv_transfer_params") @Nullable Map<String, Object> kvTransferParams) {

  /**
   * Checks the chat and returns the completion request that serves it: the chat's prompt, and every
   * other field as it is.
   *
   * @throws InvalidCompletionRequestException naming the field at fault, e.g. {@code
   *     messages[1].role}
   * @throws InvalidPromptException naming {@code messages} or {@code max_tokens} when the chat's
   *     prompt and {@code max_tokens} do not fit {@code context}
   */
  public CompletionRequest completion(ContextWindow context) {
    if (messages == null || messages.isEmpty()) {
      throw new InvalidCompletionRequestException(
          "messages", "messages must be a non-empty array of {\"role\", \"content\"} objects");
    }
    for (int i = 0; i < messages.size(); i++) {
      check(i, messages.get(i));
    }
    if (maxTokens != null && maxCompletionTokens != null) {
      throw new InvalidCompletionRequestException(
          "max_completion_tokens", "give max_tokens or max_completion_tokens, not both");
    }
    Integer max = maxTokens != null ? maxTokens : maxCompletionTokens;
    String maxName = maxTokens != null ? "max_tokens" : "max_completion_tokens";
    if (max != null && max < 1) {
      throw new InvalidCompletionRequestException(
          maxName, maxName + " must be at least 1, got " + max);
    }
    CompletionRequest.checkStreamOptions(stream, streamOptions);
    String prompt = ChatTemplate.prompt(messages);
    CompletionRequest completion =
        new CompletionRequest(model, prompt, max, stream, streamOptions, kvTransferParams);
    try {
      context.check(ToyModel.tokenCount(prompt), completion.maxTokensOrDefault());
    } catch (InvalidPromptException e) {
      if ("prompt".equals(e.param())) {
        throw new InvalidPromptException(
            "messages",
            "messages are too long: their prompt in the chat template "
                + e.getMessage().substring("prompt ".length()));
      }
      throw new InvalidPromptException(maxName, e.getMessage().replace("max_tokens", maxName));
    }
    return completion;
  }

  private static void check(int i, @Nullable ChatMessage message) {
    String at = "messages[" + i + "]";
    if (message == null) {
      throw new InvalidCompletionRequestException(
          at, at + " must be an object {\"role\", \"content\"}");
    }
    if (message.role() == null || !ChatTemplate.ROLES.contains(message.role())) {
      throw new InvalidCompletionRequestException(
          at + ".role",
          at
              + ".role must be one of system, user, assistant"
              + (message.role() == null ? "" : "; got \"" + message.role() + "\""));
    }
    if (message.content() == null) {
      throw new InvalidCompletionRequestException(
          at + ".content", at + ".content must be a string");
    }
  }
}
