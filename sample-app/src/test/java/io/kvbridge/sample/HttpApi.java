package io.kvbridge.sample;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * The sample's HTTP API as a client sees it, for tests: raw request bodies out, raw answers back,
 * and the checks every error answer must pass.
 */
public final class HttpApi {

  private static final TypeReference<Map<String, Object>> OBJECT = new TypeReference<>() {};

  private final HttpClient client = HttpClient.newHttpClient();
  private final String base;

  /** A client of the server on {@code port} of this machine. */
  public HttpApi(int port) {
    this.base = "http://127.0.0.1:" + port;
  }

  /** POSTs {@code json}, sent as it is, with {@code Content-Type: application/json}. */
  public Answer post(String path, String json) {
    return send("POST", path, "application/json", null, json);
  }

  /**
   * POSTs {@code json} and reads the answer as a stream of server-sent events, line by line as they
   * arrive, as a streaming client does.
   */
  public EventStream stream(String path, String json) {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(base + path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json))
            .build();
    try {
      HttpResponse<Stream<String>> response =
          client.send(request, HttpResponse.BodyHandlers.ofLines());
      List<String> data = new ArrayList<>();
      List<String> lines;
      try (Stream<String> body = response.body()) {
        lines = body.toList();
      }
      for (String line : lines) {
        if (line.startsWith("data: ")) {
          data.add(line.substring("data: ".length()));
        } else {
          assertThat(line).as("a line between events").isEmpty();
        }
      }
      return new EventStream(
          response.statusCode(),
          response.headers().firstValue("Content-Type").orElse(""),
          String.join("\n", lines),
          data);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while reading POST " + path, e);
    }
  }

  /** GETs {@code path}. */
  public Answer get(String path) {
    return send("GET", path, null, null, null);
  }

  /**
   * Sends a request exactly as given: {@code null} leaves a header or the body out, and no header
   * is added.
   */
  public Answer send(
      String method,
      String path,
      @Nullable String contentType,
      @Nullable String accept,
      @Nullable String body) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(base + path))
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
    if (contentType != null) {
      request.header("Content-Type", contentType);
    }
    if (accept != null) {
      request.header("Accept", accept);
    }
    try {
      HttpResponse<String> response =
          client.send(request.build(), HttpResponse.BodyHandlers.ofString());
      return new Answer(response.statusCode(), response.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for " + method + " " + path, e);
    }
  }

  /**
   * An HTTP answer.
   *
   * @param status its status
   * @param body its body, as sent
   */
  public record Answer(int status, String body) {

    /** The body as a JSON object. */
    public Map<String, Object> json() {
      return JsonMapper.shared().readValue(body, OBJECT);
    }

    /**
     * The error object, once checked: the answer has {@code status}, is in OpenAI's error shape
     * ({@code {"error": {"message", "type", "param", "code"}}}, {@code code} being the status) and
     * names no Java or parser type.
     */
    public Map<String, Object> error(int status) {
      assertThat(this.status).as("status of %s", body).isEqualTo(status);
      assertThat(body).doesNotContain("java.", "Exception").doesNotContainIgnoringCase("jackson");
      Map<String, Object> json = json();
      assertThat(json).as(body).containsOnlyKeys("error");
      @SuppressWarnings("unchecked")
      Map<String, Object> error = (Map<String, Object>) json.get("error");
      assertThat(error).as(body).containsOnlyKeys("message", "type", "param", "code");
      assertThat(error.get("code")).as(body).isEqualTo(status);
      assertThat(error.get("message")).as(body).isInstanceOf(String.class);
      assertThat(error.get("type")).as(body).isInstanceOf(String.class);
      return error;
    }

    /** The error's message, once {@link #error} has checked the answer. */
    public String errorMessage(int status) {
      return (String) error(status).get("message");
    }

    /** The text of the first choice of a completion. */
    @SuppressWarnings("unchecked")
    public String text() {
      assertThat(status).as(body).isEqualTo(200);
      return (String) ((Map<String, Object>) ((List<?>) json().get("choices")).get(0)).get("text");
    }
  }

  /**
   * A streamed answer.
   *
   * @param status its status
   * @param contentType its {@code Content-Type}
   * @param body its body, as sent
   * @param data the data of each event, in order
   */
  public record EventStream(int status, String contentType, String body, List<String> data) {

    /**
     * The chunks, once checked: the answer is a 200 {@code text/event-stream} whose last event is
     * {@code [DONE]} and whose other events are JSON objects.
     */
    public List<Map<String, Object>> chunks() {
      assertThat(status).as(body).isEqualTo(200);
      assertThat(contentType).startsWith("text/event-stream");
      assertThat(data).as(body).isNotEmpty().last().isEqualTo("[DONE]");
      return data.subList(0, data.size() - 1).stream()
          .map(chunk -> JsonMapper.shared().readValue(chunk, OBJECT))
          .toList();
    }
  }
}
