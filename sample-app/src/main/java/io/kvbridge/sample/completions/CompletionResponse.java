package io.kvbridge.sample.completions;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The answer of {@code POST /v1/completions}, after OpenAI's completions API, with vLLM's {@code
 * kv_transfer_params} extension and a {@code kvbridge} object that says where the KV came from.
 *
 * @param id the completion's id
 * @param object always {@code text_completion}
 * @param created seconds since the epoch
 * @param model the model name from the request
 * @param choices exactly one choice
 * @param usage token counts
 * @param kvTransferParams on a prefill node asked for remote decode: what the decode node needs to
 *     read the prompt's KV ({@code TransferParams.toMap()}); absent when there is nothing to read
 * @param kvbridge where the prompt's KV came from
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record CompletionResponse(
    String id,
    String object,
    long created,
    @Nullable String model,
    List<Choice> choices,
    Usage usage,
    @JsonProperty("kv_transfer_params") @Nullable Map<String, Object> kvTransferParams,
    @Nullable KvInfo kvbridge) {

  /** Copies the choices. */
  public CompletionResponse {
    choices = List.copyOf(choices);
  }

  /** The text of the first choice. */
  public String text() {
    return choices.isEmpty() ? "" : choices.get(0).text();
  }

  /**
   * One generated continuation.
   *
   * @param index its position, always 0
   * @param text the generated text
   * @param finishReason {@code length}: the toy model always generates {@code max_tokens} tokens
   */
  public record Choice(
      int index, String text, @JsonProperty("finish_reason") String finishReason) {}

  /**
   * Token counts.
   *
   * @param promptTokens tokens in the prompt
   * @param completionTokens tokens generated
   * @param totalTokens their sum
   */
  public record Usage(
      @JsonProperty("prompt_tokens") int promptTokens,
      @JsonProperty("completion_tokens") int completionTokens,
      @JsonProperty("total_tokens") int totalTokens) {}

  /**
   * Where the prompt's KV came from; the three counts add up to the prompt's tokens.
   *
   * @param engineId the engine that generated the text (or, {@code STREAMED}, that computes it)
   * @param kvSource {@code COMPUTED}, {@code LOADED}, {@code CACHED} (the engine's prefix cache
   *     held every token the prefill node leased, so nothing was loaded), {@code RECOMPUTED}, or
   *     {@code STREAMED}: a prefill node's answer given as the request's lease was granted, while
   *     its prefill still computes (no text; the decode node reads each layer as it is done)
   * @param cachedTokens the prompt's first tokens, taken from the engine's prefix cache
   * @param loadedTokens prompt tokens whose KV was loaded from a prefill node
   * @param computedTokens prompt tokens computed on the engine
   */
  public record KvInfo(
      @JsonProperty("engine_id") String engineId,
      @JsonProperty("kv_source") String kvSource,
      @JsonProperty("cached_tokens") int cachedTokens,
      @JsonProperty("loaded_tokens") int loadedTokens,
      @JsonProperty("computed_tokens") int computedTokens) {}
}
