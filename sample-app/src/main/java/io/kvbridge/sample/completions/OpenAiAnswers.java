package io.kvbridge.sample.completions;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import tools.jackson.databind.json.JsonMapper;

/**
 * Shapes a finished completion as the answer its client asked for: one JSON object, or with {@code
 * stream: true} a stream of server-sent events in OpenAI's format, {@code data: <chunk>} each, then
 * {@code data: [DONE]}.
 *
 * <p>The toy engine generates a completion whole, so a stream is cut from the finished completion:
 * a chunk per generated word (each word with the space before it), the last carrying the {@code
 * finish_reason}, the {@code kv_transfer_params} and the {@code kvbridge} object; with {@code
 * stream_options.include_usage}, one more chunk with no choices and the {@code usage}. A chat
 * stream starts with a chunk whose delta is the assistant's role and ends with an empty delta and
 * the {@code finish_reason}. The chunks are written together once the completion is done: a client
 * that goes away before that has its request cancelled as any other; after, nothing is held for it.
 * Failures are answered as usual, with an HTTP error and no stream.
 *
 * <p>Thread-safe.
 */
public final class OpenAiAnswers {

  /** The content type of a stream. */
  public static final MediaType EVENT_STREAM =
      new MediaType("text", "event-stream", StandardCharsets.UTF_8);

  private static final String DONE = "[DONE]";

  private final JsonMapper json;

  /** Writes chunks with {@code json}. */
  public OpenAiAnswers(JsonMapper json) {
    this.json = json;
  }

  /** The answer to {@code request}, whose completion is {@code answer}. */
  public ResponseEntity<Object> completion(CompletionRequest request, CompletionResponse answer) {
    if (!request.streamed()) {
      return ResponseEntity.ok(answer);
    }
    List<Object> chunks = new ArrayList<>();
    List<String> pieces = pieces(answer.text());
    String finish = ChatCompletionResponse.finishReason(answer);
    for (int i = 0; i < pieces.size(); i++) {
      boolean last = i == pieces.size() - 1;
      chunks.add(
          new CompletionChunk(
              answer.id(),
              answer.object(),
              answer.created(),
              answer.model(),
              List.of(new CompletionChunk.Choice(0, pieces.get(i), last ? finish : null)),
              null,
              last ? answer.kvTransferParams() : null,
              last ? answer.kvbridge() : null));
    }
    if (request.includeUsage()) {
      chunks.add(
          new CompletionChunk(
              answer.id(),
              answer.object(),
              answer.created(),
              answer.model(),
              List.of(),
              answer.usage(),
              null,
              null));
    }
    return stream(chunks);
  }

  /**
   * The answer to a chat whose completion request is {@code request} ({@link
   * ChatCompletionRequest#completion}) and whose completion is {@code answer}.
   */
  public ResponseEntity<Object> chat(CompletionRequest request, CompletionResponse answer) {
    if (!request.streamed()) {
      return ResponseEntity.ok(ChatCompletionResponse.of(answer));
    }
    String id = ChatCompletionResponse.chatId(answer.id());
    List<Object> chunks = new ArrayList<>();
    chunks.add(chatChunk(id, answer, new ChatChunk.Delta("assistant", ""), null, false));
    for (String piece : pieces(answer.text())) {
      chunks.add(chatChunk(id, answer, new ChatChunk.Delta(null, piece), null, false));
    }
    chunks.add(
        chatChunk(
            id,
            answer,
            new ChatChunk.Delta(null, null),
            ChatCompletionResponse.finishReason(answer),
            true));
    if (request.includeUsage()) {
      chunks.add(
          new ChatChunk(
              id,
              ChatChunk.OBJECT,
              answer.created(),
              answer.model(),
              List.of(),
              answer.usage(),
              null,
              null));
    }
    return stream(chunks);
  }

  /**
   * {@code text} cut before each space: the words as the toy model generated them, each with the
   * space before it. Together they are {@code text}.
   */
  static List<String> pieces(String text) {
    List<String> out = new ArrayList<>();
    int start = 0;
    for (int i = 1; i <= text.length(); i++) {
      if (i == text.length() || text.charAt(i) == ' ') {
        out.add(text.substring(start, i));
        start = i;
      }
    }
    return out;
  }

  private static ChatChunk chatChunk(
      String id,
      CompletionResponse answer,
      ChatChunk.Delta delta,
      @Nullable String finish,
      boolean last) {
    return new ChatChunk(
        id,
        ChatChunk.OBJECT,
        answer.created(),
        answer.model(),
        List.of(new ChatChunk.Choice(0, delta, finish)),
        null,
        last ? answer.kvTransferParams() : null,
        last ? answer.kvbridge() : null);
  }

  private ResponseEntity<Object> stream(List<Object> chunks) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (Object chunk : chunks) {
      event(out, json.writeValueAsBytes(chunk));
    }
    event(out, DONE.getBytes(StandardCharsets.US_ASCII));
    // Set here, the content type is not negotiated: a client that accepts only JSON, as OpenAI's
    // own clients say they do, still gets the stream it asked for.
    return ResponseEntity.ok()
        .contentType(EVENT_STREAM)
        .header("Cache-Control", "no-cache")
        .body(out.toByteArray());
  }

  private static void event(ByteArrayOutputStream out, byte[] data) {
    out.writeBytes("data: ".getBytes(StandardCharsets.US_ASCII));
    out.writeBytes(data);
    out.writeBytes("\n\n".getBytes(StandardCharsets.US_ASCII));
  }

  /**
   * One chunk of a streamed completion ({@code object: text_completion}).
   *
   * @param id the completion's id, the same in every chunk
   * @param object {@code text_completion}
   * @param created seconds since the epoch
   * @param model the model name from the request
   * @param choices the next piece of text; none in the usage chunk
   * @param usage in the usage chunk only
   * @param kvTransferParams in the last chunk of text, when the completion has them
   * @param kvbridge in the last chunk of text
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  record CompletionChunk(
      String id,
      String object,
      long created,
      @Nullable String model,
      List<Choice> choices,
      CompletionResponse.@Nullable Usage usage,
      @JsonProperty("kv_transfer_params") @Nullable Map<String, Object> kvTransferParams,
      CompletionResponse.@Nullable KvInfo kvbridge) {

    /**
     * A piece of text.
     *
     * @param index always 0
     * @param text the piece
     * @param finishReason {@code null} until the last piece
     */
    record Choice(
        int index,
        String text,
        @JsonProperty("finish_reason") @JsonInclude(JsonInclude.Include.ALWAYS)
            @Nullable String finishReason) {}
  }

  /**
   * One chunk of a streamed chat completion ({@code object: chat.completion.chunk}); fields as in
   * {@link CompletionChunk}.
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  record ChatChunk(
      String id,
      String object,
      long created,
      @Nullable String model,
      List<Choice> choices,
      CompletionResponse.@Nullable Usage usage,
      @JsonProperty("kv_transfer_params") @Nullable Map<String, Object> kvTransferParams,
      CompletionResponse.@Nullable KvInfo kvbridge) {

    static final String OBJECT = "chat.completion.chunk";

    /**
     * What the chunk adds to the message.
     *
     * @param index always 0
     * @param delta the addition
     * @param finishReason {@code null} until the last chunk
     */
    record Choice(
        int index,
        Delta delta,
        @JsonProperty("finish_reason") @JsonInclude(JsonInclude.Include.ALWAYS)
            @Nullable String finishReason) {}

    /**
     * An addition to the message: its role first, then pieces of its content; empty at the end.
     *
     * @param role {@code assistant} in the first chunk only
     * @param content the next piece of text
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Delta(@Nullable String role, @Nullable String content) {}
  }
}
