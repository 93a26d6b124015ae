package io.kvbridge.sample.router;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.kvbridge.sample.completions.CompletionRequest;
import io.kvbridge.sample.completions.CompletionResponse;
import io.kvbridge.sample.completions.RevokeRequest;
import io.kvbridge.sample.node.NodeKind;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

class NodeClientTest {

  /** What Tomcat answers itself, outside the application, e.g. while its connector pauses. */
  private static final String TOMCAT_400 =
      "<!doctype html><html lang=\"en\"><head><title>HTTP Status 400 - Bad Request</title></head>"
          + "<body><h1>HTTP Status 400 - Bad Request</h1></body></html>";

  private static final String APPLICATION_400 =
      "{\"error\": {\"message\": \"max_tokens must be positive\", \"type\":"
          + " \"invalid_request_error\", \"param\": \"max_tokens\", \"code\": 400}}";

  private HttpServer node;

  private final NodeClient client =
      new NodeClient(
          JsonMapper.shared(), Duration.ofSeconds(2), Duration.ofSeconds(2), Duration.ofSeconds(1));

  @Test
  void aRevokeThatReachesNoNodeFailsSayingSo() {
    URI nowhere = URI.create("http://127.0.0.1:1/revoke");

    CompletableFuture<Boolean> revoked =
        client.revoke(nowhere, new RevokeRequest("cmpl-1", "the decode call failed"));

    assertThat(revoked)
        .failsWithin(Duration.ofSeconds(10))
        .withThrowableThat()
        .havingCause()
        .withMessageStartingWith("revoke at http://127.0.0.1:1/revoke could not be reached: ");
  }

  @AfterEach
  void stopNode() {
    if (node != null) {
      node.stop(0);
    }
  }

  @Test
  void aPrefillNodes400WithoutItsReasonIsTheNodesFailureAndTriedElsewhere() throws Exception {
    URI url = nodeAnswering(400, "text/html;charset=utf-8", TOMCAT_400);

    NodeCallFailedException failure = prefillFailure(url);

    assertThat(failure.status()).isEqualTo(502);
    assertThat(failure.getMessage())
        .isEqualTo("prefill node at " + url + " answered HTTP 400 (no reason given)");
    assertThat(failure.blamesNode()).isTrue();
    assertThat(failure.retriedOnAnotherPrefillNode()).isTrue();
  }

  @Test
  void aPrefillNodes400WithItsReasonIsTheClientsAndPassedOn() throws Exception {
    URI url = nodeAnswering(400, "application/json", APPLICATION_400);

    NodeCallFailedException failure = prefillFailure(url);

    assertThat(failure.status()).isEqualTo(400);
    assertThat(failure.getMessage())
        .isEqualTo(
            "prefill node at "
                + url
                + " answered HTTP 400 (invalid_request_error: max_tokens must be positive)");
    assertThat(failure.blamesNode()).isFalse();
    assertThat(failure.retriedOnAnotherPrefillNode()).isFalse();
  }

  private NodeCallFailedException prefillFailure(URI url) throws Exception {
    CompletableFuture<CompletionResponse> answer =
        client.complete(NodeKind.PREFILL, url, CompletionRequest.of("m", "a prompt", 1));
    Throwable failure =
        NodeClient.unwrapped(answer.handle((value, error) -> error).get(10, TimeUnit.SECONDS));
    assertThat(failure).isInstanceOf(NodeCallFailedException.class);
    return (NodeCallFailedException) failure;
  }

  /** A node whose completions answer {@code status} with {@code body}. */
  private URI nodeAnswering(int status, String contentType, String body) throws IOException {
    node = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    node.createContext(
        "/v1/completions",
        exchange -> {
          exchange.getRequestBody().readAllBytes();
          exchange.getResponseHeaders().set("Content-Type", contentType);
          exchange.sendResponseHeaders(status, bytes.length);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
          }
        });
    node.start();
    return URI.create("http://127.0.0.1:" + node.getAddress().getPort() + "/v1/completions");
  }
}
