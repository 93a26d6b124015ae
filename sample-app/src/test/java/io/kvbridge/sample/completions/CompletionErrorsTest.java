package io.kvbridge.sample.completions;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.http.ResponseEntity;
import org.springframework.mock.web.MockHttpServletRequest;

/** How {@link CompletionErrors} answers a failure nobody planned for. */
@ExtendWith(OutputCaptureExtension.class)
class CompletionErrorsTest {

  private final CompletionErrors errors = new CompletionErrors();

  @Test
  void anUnexpectedFailureIsAnInternalErrorWithAnIdAndNoDetail() {
    ResponseEntity<ErrorResponse> answer =
        errors.unexpected(
            new IllegalStateException("secret detail"),
            new MockHttpServletRequest("POST", "/v1/completions"));

    assertThat(answer.getStatusCode().value()).isEqualTo(500);
    assertThat(answer.getBody().error().message()).matches("internal error \\(id [0-9a-f]{16}\\)");
    assertThat(answer.getBody().error().type()).isEqualTo("internal_error");
  }

  @Test
  void anUnexpectedFailureIsLoggedInFullUnderTheIdTheClientSees(CapturedOutput log) {
    ResponseEntity<ErrorResponse> answer =
        errors.unexpected(
            new IllegalStateException("secret detail"),
            new MockHttpServletRequest("POST", "/v1/completions"));

    String id = answer.getBody().error().message().replaceAll(".*id ([0-9a-f]+).*", "$1");
    assertThat(log.getOut())
        .contains("internal error " + id + " while serving POST /v1/completions")
        .contains("IllegalStateException: secret detail");
  }
}
