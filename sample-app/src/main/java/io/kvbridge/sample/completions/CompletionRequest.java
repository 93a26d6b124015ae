package io.kvbridge.sample.completions;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.kvbridge.sample.engine.ContextWindow;
import io.kvbridge.sample.engine.ToyModel;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The body of {@code POST /v1/completions}, after OpenAI's completions API, with vLLM's {@code
 * kv_transfer_params} extension. Each field must have its JSON type, nothing is coerced: a number
 * in quotes, a fraction or a boolean is not a {@code max_tokens} (see {@link
 * CompletionJsonConfiguration}).
 *
 * @param model the model name; echoed back, any value is accepted
 * @param prompt the prompt text
 * @param maxTokens how many tokens to generate; {@value #DEFAULT_MAX_TOKENS} when absent
 * @param stream {@code true}: answer with server-sent events, one chunk per generated word and
 *     {@code data: [DONE]} at the end (see {@link OpenAiAnswers}); absent or {@code false}: one
 *     JSON answer
 * @param streamOptions only with {@code stream: true}: {@code include_usage} adds a last chunk with
 *     the token counts
 * @param kvTransferParams {@code {"do_remote_decode": true}} on a prefill node; a prefill node's
 *     returned parameters on a decode node
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record CompletionRequest(
    @Nullable String model,
    @Nullable String prompt,
    @JsonProperty("max_tokens") @Nullable Integer maxTokens,
    @Nullable Boolean stream,
    @JsonProperty("stream_options") @Nullable StreamOptions streamOptions,
    @JsonProperty("kv_transfer_params") @Nullable Map<String, Object> kvTransferParams) {

  /** OpenAI's default for {@code max_tokens}. */
  public static final int DEFAULT_MAX_TOKENS = 16;

  /** A request for {@code prompt} with no transfer parameters. */
  public static CompletionRequest of(String model, String prompt, int maxTokens) {
    return new CompletionRequest(model, prompt, maxTokens, null, null, null);
  }

  /** Whether the answer is a stream of server-sent events. */
  public boolean streamed() {
    return Boolean.TRUE.equals(stream);
  }

  /** Whether a streamed answer ends with a chunk of token counts. */
  public boolean includeUsage() {
    return streamed() && streamOptions != null && Boolean.TRUE.equals(streamOptions.includeUsage());
  }

  /**
   * A copy that asks for one JSON answer: what the router sends the nodes, whose answers it reads
   * whole, whether or not its own client asked for a stream.
   */
  public CompletionRequest unstreamed() {
    return new CompletionRequest(model, prompt, maxTokens, null, null, kvTransferParams);
  }

  /** {@link #maxTokens()} or its default. */
  public int maxTokensOrDefault() {
    return maxTokens == null ? DEFAULT_MAX_TOKENS : maxTokens;
  }

  /** A copy with another {@code max_tokens}. */
  public CompletionRequest withMaxTokens(int value) {
    return new CompletionRequest(model, prompt, value, stream, streamOptions, kvTransferParams);
  }

  /** A copy with other {@code kv_transfer_params} ({@code null}: none). */
  public CompletionRequest withKvTransferParams(@Nullable Map<String, Object> value) {
    return new CompletionRequest(model, prompt, maxTokens, stream, streamOptions, value);
  }

  /**
   * Checks what every node and the router need: a non-empty prompt, {@code max_tokens >= 1}, {@code
   * stream_options} only with {@code stream: true}, and a prompt and {@code max_tokens} that fit
   * the model's context together.
   *
   * @throws InvalidCompletionRequestException naming the field
   * @throws io.kvbridge.sample.engine.InvalidPromptException naming {@code prompt} or {@code
   *     max_tokens} when they do not fit {@code context}, with the limit
   */
  public void validate(ContextWindow context) {
    if (prompt == null || prompt.isEmpty()) {
      throw new InvalidCompletionRequestException("prompt", "prompt must be a non-empty string");
    }
    if (maxTokens != null && maxTokens < 1) {
      throw new InvalidCompletionRequestException(
          "max_tokens", "max_tokens must be at least 1, got " + maxTokens);
    }
    checkStreamOptions(stream, streamOptions);
    context.check(ToyModel.tokenCount(prompt), maxTokensOrDefault());
  }

  /**
   * Checks that {@code stream_options} comes only with {@code stream: true}, as OpenAI's API wants.
   *
   * @throws InvalidCompletionRequestException naming {@code stream_options}
   */
  static void checkStreamOptions(@Nullable Boolean stream, @Nullable StreamOptions options) {
    if (options != null && !Boolean.TRUE.equals(stream)) {
      throw new InvalidCompletionRequestException(
          "stream_options",
          "stream_options is only allowed with stream=true; leave it out or set stream to true");
    }
  }
}
