package io.kvbridge.sample.node;

import io.kvbridge.sample.completions.ChatCompletionRequest;
import io.kvbridge.sample.completions.ClientDisconnects;
import io.kvbridge.sample.completions.CompletionRequest;
import io.kvbridge.sample.completions.CompletionResponse;
import io.kvbridge.sample.completions.ModelList;
import io.kvbridge.sample.completions.OpenAiAnswers;
import io.kvbridge.sample.completions.RevokeRequest;
import io.kvbridge.sample.completions.RevokeResponse;
import jakarta.servlet.http.HttpServletRequest;
import java.lang.reflect.Method;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import org.springframework.http.ResponseEntity;
import org.springframework.util.ReflectionUtils;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.bind.annotation.ResponseBody;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * One node's API: completions at {@code <path>/v1/completions}, chat completions at {@code
 * <path>/v1/chat/completions}, the model at {@code <path>/v1/models}, and on a prefill node {@code
 * <path>/v1/leases/revoke}. A prefill node answers {@code kv_transfer_params: {"do_remote_decode":
 * true}} with the parameters a decode node needs to read the prompt's KV; a decode node's request
 * carries those parameters, and malformed ones are answered with 400 and the reason. A completion
 * whose client closes its connection before the answer is cancelled on the engine. Either kind of
 * completion may be streamed ({@link OpenAiAnswers}).
 *
 * <p>One class serves both kinds at paths that come from configuration, so {@link
 * NodeConfiguration} maps each node's controller with {@link #mapAt} rather than by annotation.
 */
public final class NodeController {

  private static final Method COMPLETE =
      ReflectionUtils.findMethod(
          NodeController.class, "complete", CompletionRequest.class, HttpServletRequest.class);
  private static final Method CHAT =
      ReflectionUtils.findMethod(
          NodeController.class, "chat", ChatCompletionRequest.class, HttpServletRequest.class);
  private static final Method MODELS = ReflectionUtils.findMethod(NodeController.class, "models");
  private static final Method REVOKE =
      ReflectionUtils.findMethod(NodeController.class, "revoke", RevokeRequest.class);

  private final Node node;
  private final ClientDisconnects clients;
  private final OpenAiAnswers answers;

  /**
   * Serves {@code node}, watching its clients' connections with {@code clients} and shaping its
   * answers with {@code answers}.
   */
  public NodeController(Node node, ClientDisconnects clients, OpenAiAnswers answers) {
    this.node = node;
    this.clients = clients;
    this.answers = answers;
  }

  /** Runs one completion on the node's engine; cancels it if the client goes away first. */
  @ResponseBody
  public DeferredResult<ResponseEntity<Object>> complete(
      @RequestBody CompletionRequest request, HttpServletRequest http) {
    return serve(request, http, answers::completion);
  }

  /** Runs the completion of a chat's prompt; cancels it if the client goes away first. */
  @ResponseBody
  public DeferredResult<ResponseEntity<Object>> chat(
      @RequestBody ChatCompletionRequest request, HttpServletRequest http) {
    return serve(request.completion(node.engine().context()), http, answers::chat);
  }

  /** The model the node serves. */
  @ResponseBody
  public ModelList models() {
    return ModelList.toy();
  }

  /** Revokes a finished request's lease (prefill nodes). */
  @ResponseBody
  public CompletableFuture<RevokeResponse> revoke(@RequestBody RevokeRequest request) {
    return node.revoke(request);
  }

  /** Answers {@code POST <path>/v1/completions} and the rest of the node's API. */
  void mapAt(String path, RequestMappingHandlerMapping mappings) {
    map(path + "/v1/completions", RequestMethod.POST, COMPLETE, mappings);
    map(path + "/v1/chat/completions", RequestMethod.POST, CHAT, mappings);
    map(path + "/v1/models", RequestMethod.GET, MODELS, mappings);
    if (node.kind() == NodeKind.PREFILL) {
      map(path + "/v1/leases/revoke", RequestMethod.POST, REVOKE, mappings);
    }
  }

  private DeferredResult<ResponseEntity<Object>> serve(
      CompletionRequest request,
      HttpServletRequest http,
      BiFunction<CompletionRequest, CompletionResponse, ResponseEntity<Object>> shape) {
    Node.Running running = node.submit(request);
    return clients.serve(
        http,
        client -> {
          client.onGone(() -> node.cancel(running.requestId(), "the client closed its connection"));
          return running.answer().thenApply(answer -> shape.apply(request, answer));
        });
  }

  private void map(
      String path, RequestMethod method, Method handler, RequestMappingHandlerMapping mappings) {
    register(mappings, RequestMappingInfo.paths(path).methods(method), this, handler);
  }

  /**
   * Maps {@code handler} of {@code target} at what {@code info} describes, as annotations would.
   */
  static void register(
      RequestMappingHandlerMapping mappings,
      RequestMappingInfo.Builder info,
      Object target,
      Method handler) {
    mappings.registerMapping(
        info.options(mappings.getBuilderConfiguration()).build(), target, handler);
  }
}
