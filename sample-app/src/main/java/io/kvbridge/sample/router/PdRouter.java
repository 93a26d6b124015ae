package io.kvbridge.sample.router;

import io.kvbridge.sample.completions.CompletionRequest;
import io.kvbridge.sample.completions.CompletionResponse;
import io.kvbridge.sample.completions.ErrorResponse;
import io.kvbridge.sample.completions.KvTransferRequest;
import io.kvbridge.sample.engine.ContextWindow;
import java.net.URI;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;

/**
 * The disaggregated-serving proxy: sends a request to the prefill node with {@code max_tokens=1}
 * and {@code kv_transfer_params: {"do_remote_decode": true}}, takes the parameters the prefill node
 * returns, sends the original request with those parameters to the decode node, and answers with
 * the decode node's completion.
 *
 * <p>A request is checked before the prefill node is called, against the same {@link ContextWindow}
 * as the nodes': one that could never be decoded costs the prefill node nothing.
 *
 * <p>Every failure is answered with an HTTP error that names the node and the reason, never with a
 * 200: a prefill node's 4xx (the client's request was bad) is passed on with its status; any other
 * failure of either node is a 502 (504 if the node timed out).
 *
 * <p>Thread-safe.
 */
public final class PdRouter {

  private static final Logger LOG = LoggerFactory.getLogger(PdRouter.class);

  private final RestClient client;
  private final ContextWindow context;
  private final Supplier<URI> prefillBase;
  private final Supplier<URI> decodeBase;
  private final DropAfterPrefill drops;
  private final AtomicLong requests = new AtomicLong();
  private final AtomicLong served = new AtomicLong();
  private final AtomicLong dropped = new AtomicLong();
  private final AtomicLong failed = new AtomicLong();

  /**
   * A router calling the nodes at the given base URLs ({@code <base>/v1/completions}); the URLs are
   * asked for on each call, so they may depend on the port the server bound. {@code context} is the
   * nodes' model context, which every request must fit.
   */
  public PdRouter(
      RestClient client,
      ContextWindow context,
      Supplier<URI> prefillBase,
      Supplier<URI> decodeBase,
      DropAfterPrefill drops) {
    this.client = Objects.requireNonNull(client, "client");
    this.context = Objects.requireNonNull(context, "context");
    this.prefillBase = Objects.requireNonNull(prefillBase, "prefillBase");
    this.decodeBase = Objects.requireNonNull(decodeBase, "decodeBase");
    this.drops = Objects.requireNonNull(drops, "drops");
  }

  /**
   * Routes one request through prefill and decode.
   *
   * @throws io.kvbridge.sample.completions.InvalidCompletionRequestException if the request is
   *     malformed
   * @throws io.kvbridge.sample.engine.InvalidPromptException if it does not fit the context
   * @throws NodeCallFailedException if a node failed or could not be reached
   * @throws DroppedAfterPrefillException if fault injection dropped the request
   */
  public CompletionResponse route(CompletionRequest request) {
    requests.incrementAndGet();
    try {
      request.validate(context);
      CompletionRequest toPrefill =
          request
              .withMaxTokens(1)
              .withKvTransferParams(Map.of(KvTransferRequest.DO_REMOTE_DECODE, true));
      CompletionResponse prefilled = call("prefill", prefillBase.get(), toPrefill);
      Map<String, Object> params = prefilled.kvTransferParams();
      if (params != null && drops.dropNext()) {
        dropped.incrementAndGet();
        DroppedAfterPrefillException drop =
            new DroppedAfterPrefillException(
                String.valueOf(params.get("request_id")),
                String.valueOf(params.get("producer_engine_id")),
                drops.share());
        LOG.debug("{}", drop.getMessage());
        throw drop;
      }
      CompletionResponse decoded =
          call("decode", decodeBase.get(), request.withKvTransferParams(params));
      served.incrementAndGet();
      return decoded;
    } catch (DroppedAfterPrefillException e) {
      throw e;
    } catch (RuntimeException e) {
      failed.incrementAndGet();
      throw e;
    }
  }

  /** The router's fault injection, which the demo arms while it runs. */
  public DropAfterPrefill faults() {
    return drops;
  }

  /** What the router did so far. */
  public RouterStats stats() {
    return new RouterStats(requests.get(), served.get(), dropped.get(), failed.get());
  }

  private CompletionResponse call(String node, URI base, CompletionRequest body) {
    String url = base.toString().replaceAll("/+$", "") + "/v1/completions";
    try {
      return client
          .post()
          .uri(url)
          .contentType(MediaType.APPLICATION_JSON)
          .accept(MediaType.APPLICATION_JSON)
          .body(body)
          .exchange(
              (req, response) -> {
                HttpStatusCode status = response.getStatusCode();
                if (status.is2xxSuccessful()) {
                  CompletionResponse answer = response.bodyTo(CompletionResponse.class);
                  if (answer == null || answer.choices().isEmpty()) {
                    throw new NodeCallFailedException(
                        502,
                        node + "_failed",
                        node + " node at " + url + " sent no completion",
                        null);
                  }
                  return answer;
                }
                String reason;
                try {
                  ErrorResponse error = response.bodyTo(ErrorResponse.class);
                  reason =
                      error == null || error.error() == null
                          ? "no reason given"
                          : error.error().type() + ": " + error.error().message();
                } catch (RestClientException | IllegalArgumentException e) {
                  reason = "an unreadable error body";
                }
                throw nodeFailed(node, url, status.value(), reason);
              });
    } catch (ResourceAccessException e) {
      // The I/O error's own message (connection refused, timed out), not Spring's, which wraps it.
      String reason = NestedExceptionUtils.getMostSpecificCause(e).getMessage();
      throw new NodeCallFailedException(
          502,
          node + "_unreachable",
          node
              + " node at "
              + url
              + " could not be reached"
              + (reason == null || reason.isBlank() ? "" : ": " + reason),
          e);
    } catch (RestClientException e) {
      // Its message names the Java types it tried to read; the log keeps it.
      LOG.warn("{} node at {} sent an answer the router cannot read", node, url, e);
      throw new NodeCallFailedException(
          502,
          node + "_failed",
          node + " node at " + url + " sent an answer the router cannot read",
          e);
    }
  }

  private static NodeCallFailedException nodeFailed(
      String node, String url, int status, String reason) {
    // The client's own mistakes (a bad prompt) show up as the prefill node's 4xx; anything the
    // decode node refuses came from the prefill node's answer, not from the client.
    int answer;
    if (node.equals("prefill") && status >= 400 && status < 500) {
      answer = status;
    } else if (status == 504) {
      answer = 504;
    } else {
      answer = 502;
    }
    return new NodeCallFailedException(
        answer,
        node + "_failed",
        node + " node at " + url + " answered HTTP " + status + " (" + reason + ")",
        null);
  }
}
