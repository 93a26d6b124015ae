package io.kvbridge.sample.router;

import io.kvbridge.sample.SampleProperties;
import io.kvbridge.sample.completions.ChatCompletionRequest;
import io.kvbridge.sample.completions.ClientDisconnects;
import io.kvbridge.sample.completions.CompletionRequest;
import io.kvbridge.sample.completions.ModelList;
import io.kvbridge.sample.completions.OpenAiAnswers;
import io.kvbridge.sample.engine.ContextWindow;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;
import tools.jackson.databind.json.JsonMapper;

/**
 * The router's API, the one clients call: {@code /v1/completions}, {@code /v1/chat/completions}
 * (the completion of the chat's prompt, {@link io.kvbridge.sample.completions.ChatTemplate}) and
 * {@code /v1/models}. Served asynchronously: no request thread waits for the nodes, and a client
 * that closes its connection has its request cancelled (see {@link PdRouter}). A streamed answer is
 * cut from the decode node's completion ({@link OpenAiAnswers}); the nodes are called as for any
 * other request.
 */
@RestController
@ConditionalOnBooleanProperty(name = "kvbridge.sample.router.enabled", matchIfMissing = true)
public class RouterController {

  private final PdRouter router;
  private final ClientDisconnects clients;
  private final OpenAiAnswers answers;
  private final ContextWindow context;

  /**
   * Serves {@code router}, watching its clients' connections with {@code clients}; chats must fit
   * the context of {@code properties}.
   */
  public RouterController(
      PdRouter router, ClientDisconnects clients, JsonMapper json, SampleProperties properties) {
    this.router = router;
    this.clients = clients;
    this.answers = new OpenAiAnswers(json);
    this.context = properties.engine().context();
  }

  /** Routes one completion through a prefill and a decode node. */
  @PostMapping("/v1/completions")
  public DeferredResult<ResponseEntity<Object>> complete(
      @RequestBody CompletionRequest request, HttpServletRequest http) {
    return clients.serve(
        http,
        client ->
            router.route(request, client).thenApply(answer -> answers.completion(request, answer)));
  }

  /** Routes the completion of a chat's prompt through a prefill and a decode node. */
  @PostMapping("/v1/chat/completions")
  public DeferredResult<ResponseEntity<Object>> chat(
      @RequestBody ChatCompletionRequest chat, HttpServletRequest http) {
    CompletionRequest request = chat.completion(context);
    return clients.serve(
        http,
        client -> router.route(request, client).thenApply(answer -> answers.chat(request, answer)));
  }

  /** The model the nodes serve. */
  @GetMapping("/v1/models")
  public ModelList models() {
    return ModelList.toy();
  }
}
