package io.kvbridge.sample.completions;

import org.jspecify.annotations.Nullable;

/**
 * An error answer, in OpenAI's shape: {@code {"error": {"message", "type", "param", "code"}}}.
 *
 * @param error what went wrong
 */
public record ErrorResponse(Detail error) {

  /** An error answer with HTTP status {@code code}. */
  public static ErrorResponse of(int code, String type, String message, @Nullable String param) {
    return new ErrorResponse(new Detail(message, type, param, code));
  }

  /**
   * What went wrong. Every field is always present, {@code param} as {@code null} when no field is
   * at fault, as in OpenAI's answers.
   *
   * @param message the reason, for people
   * @param type a stable machine-readable kind, e.g. {@code invalid_kv_transfer_params}
   * @param param the request field at fault, if one is
   * @param code the HTTP status
   */
  public record Detail(String message, String type, @Nullable String param, int code) {}
}
