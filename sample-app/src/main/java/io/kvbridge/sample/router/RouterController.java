package io.kvbridge.sample.router;

import io.kvbridge.sample.completions.ClientDisconnects;
import io.kvbridge.sample.completions.CompletionRequest;
import io.kvbridge.sample.completions.CompletionResponse;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;

/**
 * The router's completions API at {@code /v1/completions}, the one clients call. Served
 * asynchronously: no request thread waits for the nodes, and a client that closes its connection
 * has its request cancelled (see {@link PdRouter}).
 */
@RestController
@ConditionalOnBooleanProperty(name = "kvbridge.sample.router.enabled", matchIfMissing = true)
public class RouterController {

  private final PdRouter router;
  private final ClientDisconnects clients;

  /** Serves {@code router}, watching its clients' connections with {@code clients}. */
  public RouterController(PdRouter router, ClientDisconnects clients) {
    this.router = router;
    this.clients = clients;
  }

  /** Routes one completion through a prefill and a decode node. */
  @PostMapping("/v1/completions")
  public DeferredResult<CompletionResponse> complete(
      @RequestBody CompletionRequest request, HttpServletRequest http) {
    return clients.serve(http, client -> router.route(request, client));
  }
}
