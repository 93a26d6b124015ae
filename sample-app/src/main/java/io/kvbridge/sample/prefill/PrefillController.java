package io.kvbridge.sample.prefill;

import io.kvbridge.sample.completions.CompletionRequest;
import io.kvbridge.sample.completions.CompletionResponse;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The prefill node's completions API at {@code <kvbridge.sample.prefill.path>/v1/completions}. With
 * {@code kv_transfer_params: {"do_remote_decode": true}} the answer carries the parameters a decode
 * node needs to read the prompt's KV.
 */
@RestController
@ConditionalOnBooleanProperty(name = "kvbridge.sample.prefill.enabled", matchIfMissing = true)
public class PrefillController {

  private final PrefillNode node;

  /** Serves {@code node}. */
  public PrefillController(PrefillNode node) {
    this.node = node;
  }

  /** Runs one completion on the prefill engine. */
  @PostMapping("${kvbridge.sample.prefill.path:" + PrefillNode.DEFAULT_PATH + "}/v1/completions")
  public CompletionResponse complete(@RequestBody CompletionRequest request) {
    return node.endpoint().complete(request);
  }
}
