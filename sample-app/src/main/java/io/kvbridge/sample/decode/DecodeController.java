package io.kvbridge.sample.decode;

import io.kvbridge.sample.completions.CompletionRequest;
import io.kvbridge.sample.completions.CompletionResponse;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The decode node's completions API at {@code <kvbridge.sample.decode.path>/v1/completions}. The
 * request carries the {@code kv_transfer_params} a prefill node returned; malformed ones are
 * answered with 400 and the reason.
 */
@RestController
@ConditionalOnBooleanProperty(name = "kvbridge.sample.decode.enabled", matchIfMissing = true)
public class DecodeController {

  private final DecodeNode node;

  /** Serves {@code node}. */
  public DecodeController(DecodeNode node) {
    this.node = node;
  }

  /** Runs one completion on the decode engine, loading the prompt's KV first. */
  @PostMapping("${kvbridge.sample.decode.path:" + DecodeNode.DEFAULT_PATH + "}/v1/completions")
  public CompletionResponse complete(@RequestBody CompletionRequest request) {
    return node.endpoint().complete(request);
  }
}
