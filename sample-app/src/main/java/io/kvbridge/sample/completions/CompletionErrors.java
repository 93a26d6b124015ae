package io.kvbridge.sample.completions;

import io.kvbridge.sample.engine.EngineClosedException;
import io.kvbridge.sample.engine.EngineFailedException;
import io.kvbridge.sample.engine.InvalidPromptException;
import io.kvbridge.sample.engine.KvLoadFailedException;
import io.kvbridge.sample.engine.RequestCancelledException;
import io.kvbridge.spi.InvalidTransferParamsException;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Turns every failure of a completion into an HTTP error whose body says why, in OpenAI's error
 * shape, in the client's terms (never a Java or parser type name); a failed completion is never
 * answered with 200.
 *
 * <ul>
 *   <li>400: a body that is not JSON or has a field of the wrong JSON type, a malformed request, a
 *       prompt and {@code max_tokens} beyond the model's context, malformed {@code
 *       kv_transfer_params};
 *   <li>502: the KV could not be loaded from the prefill node (policy {@code fail}), or another
 *       node failed (router);
 *   <li>503: the engine is shut down or has failed, or the router dropped the request;
 *   <li>504: the engine did not answer in time;
 *   <li>499: the client closed its connection and the request was cancelled (nobody reads it);
 *   <li>500: anything else: {@code internal error} with an id, logged in full under that id.
 * </ul>
 *
 * <p>Failures outside a completion (an unknown path, a wrong method or content type) are answered
 * by {@link HttpErrorController}.
 */
@RestControllerAdvice(basePackages = "io.kvbridge.sample")
public class CompletionErrors {

  /** A malformed request field. */
  @ExceptionHandler(InvalidCompletionRequestException.class)
  public ResponseEntity<ErrorResponse> invalidRequest(InvalidCompletionRequestException e) {
    return answer(HttpStatus.BAD_REQUEST, "invalid_request_error", e.getMessage(), e.param());
  }

  /** Malformed {@code kv_transfer_params}, or ones the connector refused. */
  @ExceptionHandler(InvalidTransferParamsException.class)
  public ResponseEntity<ErrorResponse> invalidParams(InvalidTransferParamsException e) {
    return answer(
        HttpStatus.BAD_REQUEST, "invalid_kv_transfer_params", e.getMessage(), "kv_transfer_params");
  }

  /** A prompt or {@code max_tokens} the engine cannot take. */
  @ExceptionHandler(InvalidPromptException.class)
  public ResponseEntity<ErrorResponse> invalidPrompt(InvalidPromptException e) {
    return answer(HttpStatus.BAD_REQUEST, "invalid_request_error", e.getMessage(), e.param());
  }

  /** A body that is not JSON, not an object, or has a field of the wrong JSON type. */
  @ExceptionHandler(HttpMessageNotReadableException.class)
  public ResponseEntity<ErrorResponse> unreadable(HttpMessageNotReadableException e) {
    UnreadableBody body = UnreadableBody.of(e);
    return answer(HttpStatus.BAD_REQUEST, "invalid_request_error", body.message(), body.param());
  }

  /** The KV could not be loaded and the policy is {@code fail}. */
  @ExceptionHandler(KvLoadFailedException.class)
  public ResponseEntity<ErrorResponse> loadFailed(KvLoadFailedException e) {
    return answer(HttpStatus.BAD_GATEWAY, "kv_load_failed", e.getMessage(), null);
  }

  /** The engine is shut down. */
  @ExceptionHandler(EngineClosedException.class)
  public ResponseEntity<ErrorResponse> closed(EngineClosedException e) {
    return answer(HttpStatus.SERVICE_UNAVAILABLE, "engine_unavailable", e.getMessage(), null);
  }

  /** The engine's step loop died; the node serves no more completions. */
  @ExceptionHandler(EngineFailedException.class)
  public ResponseEntity<ErrorResponse> engineFailed(EngineFailedException e) {
    return answer(HttpStatus.SERVICE_UNAVAILABLE, "engine_failed", e.getMessage(), null);
  }

  /** The request was cancelled, because its client went away. */
  @ExceptionHandler(RequestCancelledException.class)
  public ResponseEntity<ErrorResponse> cancelled(RequestCancelledException e) {
    return answer(
        ClientClosedRequestException.STATUS,
        ClientClosedRequestException.TYPE,
        e.getMessage(),
        null);
  }

  /** A failure that carries its own status. */
  @ExceptionHandler(CompletionFailedException.class)
  public ResponseEntity<ErrorResponse> failed(CompletionFailedException e) {
    return answer(e.status(), e.type(), e.getMessage(), null);
  }

  /** Anything else: a bug or an unexpected state, logged in full under the id the client sees. */
  @ExceptionHandler(RuntimeException.class)
  public ResponseEntity<ErrorResponse> unexpected(RuntimeException e, HttpServletRequest request) {
    return ResponseEntity.status(HttpStatus.INTERNAL_SERVER_ERROR)
        .body(UnexpectedFailure.report(request.getMethod() + " " + request.getRequestURI(), e));
  }

  private static ResponseEntity<ErrorResponse> answer(
      HttpStatus status, String type, String message, @Nullable String param) {
    return answer(status.value(), type, message, param);
  }

  private static ResponseEntity<ErrorResponse> answer(
      int status, String type, String message, @Nullable String param) {
    return ResponseEntity.status(status).body(ErrorResponse.of(status, type, message, param));
  }
}
