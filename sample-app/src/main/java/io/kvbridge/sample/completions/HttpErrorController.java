package io.kvbridge.sample.completions;

import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Locale;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.webmvc.error.ErrorAttributes;
import org.springframework.boot.webmvc.error.ErrorController;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.HttpRequestMethodNotSupportedException;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.ServletWebRequest;

/**
 * Answers every error that reaches the servlet container's error path, rather than a completion's
 * own error handling, in OpenAI's error shape and in plain words: an unknown path (404), a wrong
 * method (405), an {@code Accept} header that excludes JSON (406), a body too large (413), a wrong
 * content type (415), a failure outside any controller (500, logged under the id in the message),
 * and whatever else the container reports. It takes the place of Spring Boot's error controller,
 * whose answers have another shape, for the router, both nodes and the actuator alike.
 *
 * <p>Thread-safe: called by the web server's request threads.
 */
@RestController
public class HttpErrorController implements ErrorController {

  private final ErrorAttributes errors;

  /** Reads the failure of each request from {@code errors}. */
  public HttpErrorController(ErrorAttributes errors) {
    this.errors = errors;
  }

  /** The answer to the failed request this error dispatch is for. */
  @RequestMapping("${server.error.path:${error.path:/error}}")
  public ResponseEntity<ErrorResponse> error(HttpServletRequest request) {
    // Error dispatches are GETs; the failed request's own method is kept aside.
    String method =
        request.getAttribute(RequestDispatcher.ERROR_METHOD) instanceof String original
            ? original
            : request.getMethod();
    String path =
        request.getAttribute(RequestDispatcher.ERROR_REQUEST_URI) instanceof String uri
            ? uri
            : request.getRequestURI();
    // Asked for directly, the error path is just a path with nothing behind it.
    int status =
        request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE) instanceof Integer code
            ? code
            : HttpStatus.NOT_FOUND.value();
    Throwable cause = errors.getError(new ServletWebRequest(request));
    ErrorResponse body =
        status == HttpStatus.INTERNAL_SERVER_ERROR.value()
            ? UnexpectedFailure.report(method + " " + path, cause)
            : ErrorResponse.of(
                status,
                status < 500 ? "invalid_request_error" : "server_error",
                message(status, method, path, request.getContentType(), cause),
                null);
    // Whatever the request accepts: the error of a 406 must still be readable.
    return ResponseEntity.status(status).contentType(MediaType.APPLICATION_JSON).body(body);
  }

  private static String message(
      int status,
      String method,
      String path,
      @Nullable String contentType,
      @Nullable Throwable cause) {
    return switch (status) {
      case 404 -> "there is no endpoint at " + method + " " + path;
      case 405 -> method + " is not allowed on " + path + allowed(cause);
      case 406 ->
          path + " answers with application/json only; accept it (Accept: application/json)";
      case 413 -> "the request body is too large";
      case 415 ->
          (contentType == null
                  ? "the request has no Content-Type"
                  : "Content-Type " + contentType + " is not supported")
              + "; send the body as application/json";
      default -> {
        HttpStatus known = HttpStatus.resolve(status);
        yield "the request failed with HTTP "
            + status
            + (known == null ? "" : " (" + known.getReasonPhrase().toLowerCase(Locale.ROOT) + ")");
      }
    };
  }

  private static String allowed(@Nullable Throwable cause) {
    if (cause instanceof HttpRequestMethodNotSupportedException e) {
      String[] supported = e.getSupportedMethods();
      if (supported != null && supported.length > 0) {
        return "; use " + String.join(" or ", supported);
      }
    }
    return "";
  }
}
