package io.kvbridge.sample.router;

import io.kvbridge.sample.completions.CompletionRequest;
import io.kvbridge.sample.completions.CompletionResponse;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** The router's completions API at {@code /v1/completions}, the one clients call. */
@RestController
@ConditionalOnBooleanProperty(name = "kvbridge.sample.router.enabled", matchIfMissing = true)
public class RouterController {

  private final PdRouter router;

  /** Serves {@code router}. */
  public RouterController(PdRouter router) {
    this.router = router;
  }

  /** Routes one completion through the prefill and the decode node. */
  @PostMapping("/v1/completions")
  public CompletionResponse complete(@RequestBody CompletionRequest request) {
    return router.route(request);
  }
}
