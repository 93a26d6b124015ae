package io.kvbridge.sample.node;

import io.kvbridge.sample.completions.CompletionRequest;
import io.kvbridge.sample.completions.CompletionResponse;
import java.lang.reflect.Method;
import org.springframework.util.ReflectionUtils;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.bind.annotation.ResponseBody;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * One node's completions API at {@code <path>/v1/completions}. A prefill node answers {@code
 * kv_transfer_params: {"do_remote_decode": true}} with the parameters a decode node needs to read
 * the prompt's KV; a decode node's request carries those parameters, and malformed ones are
 * answered with 400 and the reason.
 *
 * <p>One class serves both kinds at paths that come from configuration, so {@link
 * NodeConfiguration} maps each node's controller with {@link #mapAt} rather than by annotation.
 */
public final class NodeController {

  private static final Method COMPLETE =
      ReflectionUtils.findMethod(NodeController.class, "complete", CompletionRequest.class);

  private final Node node;

  /** Serves {@code node}. */
  public NodeController(Node node) {
    this.node = node;
  }

  /** Runs one completion on the node's engine. */
  @ResponseBody
  public CompletionResponse complete(@RequestBody CompletionRequest request) {
    return node.complete(request);
  }

  /** Answers {@code POST <path>/v1/completions} from now on. */
  void mapAt(String path, RequestMappingHandlerMapping mappings) {
    RequestMappingInfo info =
        RequestMappingInfo.paths(path + "/v1/completions")
            .methods(RequestMethod.POST)
            .options(mappings.getBuilderConfiguration())
            .build();
    mappings.registerMapping(info, this, COMPLETE);
  }
}
