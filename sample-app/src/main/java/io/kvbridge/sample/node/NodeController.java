package io.kvbridge.sample.node;

import io.kvbridge.sample.completions.ClientDisconnects;
import io.kvbridge.sample.completions.CompletionRequest;
import io.kvbridge.sample.completions.CompletionResponse;
import io.kvbridge.sample.completions.RevokeRequest;
import io.kvbridge.sample.completions.RevokeResponse;
import jakarta.servlet.http.HttpServletRequest;
import java.lang.reflect.Method;
import java.util.concurrent.CompletableFuture;
import org.springframework.util.ReflectionUtils;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.bind.annotation.ResponseBody;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * One node's API: completions at {@code <path>/v1/completions}, and on a prefill node {@code
 * <path>/v1/leases/revoke}. A prefill node answers {@code kv_transfer_params: {"do_remote_decode":
 * true}} with the parameters a decode node needs to read the prompt's KV; a decode node's request
 * carries those parameters, and malformed ones are answered with 400 and the reason. A completion
 * whose client closes its connection before the answer is cancelled on the engine.
 *
 * <p>One class serves both kinds at paths that come from configuration, so {@link
 * NodeConfiguration} maps each node's controller with {@link #mapAt} rather than by annotation.
 */
public final class NodeController {

  private static final Method COMPLETE =
      ReflectionUtils.findMethod(
          NodeController.class, "complete", CompletionRequest.class, HttpServletRequest.class);
  private static final Method REVOKE =
      ReflectionUtils.findMethod(NodeController.class, "revoke", RevokeRequest.class);

  private final Node node;
  private final ClientDisconnects clients;

  /** Serves {@code node}, watching its clients' connections with {@code clients}. */
  public NodeController(Node node, ClientDisconnects clients) {
    this.node = node;
    this.clients = clients;
  }

  /** Runs one completion on the node's engine; cancels it if the client goes away first. */
  @ResponseBody
  public DeferredResult<CompletionResponse> complete(
      @RequestBody CompletionRequest request, HttpServletRequest http) {
    Node.Running running = node.submit(request);
    return clients.serve(
        http,
        client -> {
          client.onGone(() -> node.cancel(running.requestId(), "the client closed its connection"));
          return running.answer();
        });
  }

  /** Revokes a finished request's lease (prefill nodes). */
  @ResponseBody
  public CompletableFuture<RevokeResponse> revoke(@RequestBody RevokeRequest request) {
    return node.revoke(request);
  }

  /** Answers {@code POST <path>/v1/completions}, and on a prefill node the revocations. */
  void mapAt(String path, RequestMappingHandlerMapping mappings) {
    map(path + "/v1/completions", COMPLETE, mappings);
    if (node.kind() == NodeKind.PREFILL) {
      map(path + "/v1/leases/revoke", REVOKE, mappings);
    }
  }

  private void map(String path, Method method, RequestMappingHandlerMapping mappings) {
    RequestMappingInfo info =
        RequestMappingInfo.paths(path)
            .methods(RequestMethod.POST)
            .options(mappings.getBuilderConfiguration())
            .build();
    mappings.registerMapping(info, this, method);
  }
}
