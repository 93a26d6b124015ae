package io.kvbridge.sample.router;

import io.kvbridge.sample.completions.CompletionRequest;
import io.kvbridge.sample.completions.CompletionResponse;
import io.kvbridge.sample.completions.ErrorResponse;
import io.kvbridge.sample.completions.RevokeRequest;
import io.kvbridge.sample.completions.RevokeResponse;
import io.kvbridge.sample.node.NodeKind;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * The router's HTTP calls to the nodes, over HTTP/1.1: completions, revocations and health. Every
 * call is asynchronous and bounded: the connect timeout, then the read timeout (the health timeout
 * for health). Cancelling the future of a completion closes its connection, which the node sees as
 * its client going away.
 *
 * <p>Thread-safe.
 */
public final class NodeClient {

  private static final Logger LOG = LoggerFactory.getLogger(NodeClient.class);
  private static final TypeReference<Map<String, Object>> OBJECT = new TypeReference<>() {};

  private final HttpClient http;
  private final JsonMapper json;
  private final Duration readTimeout;
  private final Duration healthTimeout;

  /**
   * A client that reads and writes JSON with {@code json}.
   *
   * @param connectTimeout how long to wait to connect to a node
   * @param readTimeout how long to wait for a node's answer
   * @param healthTimeout how long to wait for a node's health, connecting included
   */
  public NodeClient(
      JsonMapper json, Duration connectTimeout, Duration readTimeout, Duration healthTimeout) {
    this.http =
        HttpClient.newBuilder()
            // Its connection is the request: closing it cancels the request on the node.
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(connectTimeout)
            .build();
    this.json = json;
    this.readTimeout = readTimeout;
    this.healthTimeout = healthTimeout;
  }

  /**
   * POSTs {@code body} to a node's completions; completes with the completion or fails with {@link
   * NodeCallFailedException}. Cancelling the returned future aborts the call.
   */
  CompletableFuture<CompletionResponse> complete(NodeKind node, URI url, CompletionRequest body) {
    CompletableFuture<HttpResponse<byte[]>> exchange =
        http.sendAsync(post(url, body, readTimeout), HttpResponse.BodyHandlers.ofByteArray());
    CompletableFuture<CompletionResponse> answer =
        exchange.handle(
            (response, failure) -> {
              if (failure != null) {
                throw failed(node, url, failure);
              }
              return completion(node, url, response);
            });
    answer.whenComplete(
        (value, failure) -> {
          if (answer.isCancelled()) {
            exchange.cancel(true);
          }
        });
    return answer;
  }

  /**
   * Asks a prefill node to revoke a lease; completes with whether it did, or fails with the reason
   * the call failed (a node that could not be reached or did not answer says so in words: the JDK's
   * own exception often has no message).
   */
  CompletableFuture<Boolean> revoke(URI url, RevokeRequest body) {
    return http.sendAsync(post(url, body, readTimeout), HttpResponse.BodyHandlers.ofByteArray())
        .handle(
            (response, failure) -> {
              if (failure != null) {
                Throwable cause = unwrapped(failure);
                throw new IllegalStateException(
                    "revoke at " + url + " " + withoutAnswer(cause, readTimeout), cause);
              }
              if (response.statusCode() != 200) {
                throw new IllegalStateException(
                    "answered HTTP " + response.statusCode() + " " + errorOf(response));
              }
              return json.readValue(response.body(), RevokeResponse.class).revoked();
            });
  }

  /** A node's health at {@code url}; never fails: a node that does not answer UP is down. */
  CompletableFuture<NodeHealth> health(URI url) {
    HttpRequest request =
        HttpRequest.newBuilder(url)
            .timeout(healthTimeout)
            .header("Accept", "application/json")
            .GET()
            .build();
    return http.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray())
        .handle(
            (response, failure) -> {
              if (failure != null) {
                return NodeHealth.down(
                    "health at " + url + " " + withoutAnswer(unwrapped(failure), healthTimeout));
              }
              String status;
              try {
                status = String.valueOf(json.readValue(response.body(), OBJECT).get("status"));
              } catch (JacksonException e) {
                status = "unreadable";
              }
              if (response.statusCode() == 200 && "UP".equals(status)) {
                return NodeHealth.probedUp();
              }
              return NodeHealth.down(
                  "health at "
                      + url
                      + " answered HTTP "
                      + response.statusCode()
                      + ", status "
                      + status);
            });
  }

  private HttpRequest post(URI url, Object body, Duration timeout) {
    return HttpRequest.newBuilder(url)
        .timeout(timeout)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json")
        .POST(HttpRequest.BodyPublishers.ofByteArray(json.writeValueAsBytes(body)))
        .build();
  }

  private CompletionResponse completion(NodeKind node, URI url, HttpResponse<byte[]> response) {
    int status = response.statusCode();
    if (status < 200 || status >= 300) {
      ErrorResponse.Detail error = errorDetail(response);
      throw NodeCallFailedException.answered(
          node,
          status,
          error == null ? null : error.type(),
          node.id()
              + " node at "
              + url
              + " answered HTTP "
              + status
              + " ("
              + (error == null ? "no reason given" : error.type() + ": " + error.message())
              + ")");
    }
    CompletionResponse answer;
    try {
      answer = json.readValue(response.body(), CompletionResponse.class);
    } catch (JacksonException e) {
      // Its message names the Java types it tried to read; the log keeps it.
      LOG.warn("{} node at {} sent an answer the router cannot read", node.id(), url, e);
      throw NodeCallFailedException.withoutAnswer(
          node,
          NodeCallFailedException.Kind.UNREADABLE,
          node.id() + " node at " + url + " sent an answer the router cannot read",
          e);
    }
    if (answer == null || answer.choices().isEmpty()) {
      throw NodeCallFailedException.withoutAnswer(
          node,
          NodeCallFailedException.Kind.UNREADABLE,
          node.id() + " node at " + url + " sent no completion",
          null);
    }
    return answer;
  }

  private RuntimeException failed(NodeKind node, URI url, Throwable failure) {
    Throwable cause = unwrapped(failure);
    if (cause instanceof CancellationException cancelled) {
      return cancelled;
    }
    NodeCallFailedException.Kind kind;
    if (cause instanceof HttpConnectTimeoutException || cause instanceof ConnectException) {
      kind = NodeCallFailedException.Kind.UNREACHABLE;
    } else if (cause instanceof HttpTimeoutException) {
      kind = NodeCallFailedException.Kind.TIMED_OUT;
    } else {
      kind = NodeCallFailedException.Kind.BROKEN;
    }
    String what =
        kind == NodeCallFailedException.Kind.TIMED_OUT
            ? withoutAnswer(cause, readTimeout) + " (kvbridge.sample.router.read-timeout)"
            : withoutAnswer(cause, readTimeout);
    return NodeCallFailedException.withoutAnswer(
        node, kind, node.id() + " node at " + url + " " + what, cause);
  }

  /** Why there was no answer, in words: "could not be reached: ...", "did not answer ...". */
  private static String withoutAnswer(Throwable cause, Duration timeout) {
    if (cause instanceof HttpConnectTimeoutException) {
      return "could not be reached: connecting timed out";
    }
    if (cause instanceof HttpTimeoutException) {
      return "did not answer within " + timeout.toMillis() + " ms";
    }
    String reason = deepestMessage(cause);
    if (cause instanceof ConnectException) {
      // The JDK's client often loses the reason (refused, no route): its message is empty.
      return "could not be reached: " + (reason == null ? "no connection could be made" : reason);
    }
    return "failed during the call" + (reason == null ? "" : ": " + reason);
  }

  private ErrorResponse.@Nullable Detail errorDetail(HttpResponse<byte[]> response) {
    try {
      ErrorResponse error = json.readValue(response.body(), ErrorResponse.class);
      return error == null ? null : error.error();
    } catch (JacksonException e) {
      return null;
    }
  }

  private String errorOf(HttpResponse<byte[]> response) {
    ErrorResponse.Detail error = errorDetail(response);
    return error == null ? "(no reason given)" : "(" + error.type() + ": " + error.message() + ")";
  }

  static Throwable unwrapped(Throwable failure) {
    Throwable t = failure;
    while (t instanceof CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  private static @Nullable String deepestMessage(Throwable failure) {
    String message = null;
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t.getMessage() != null && !t.getMessage().isBlank()) {
        message = t.getMessage();
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return message;
  }
}
