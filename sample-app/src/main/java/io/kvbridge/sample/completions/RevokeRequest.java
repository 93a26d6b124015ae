package io.kvbridge.sample.completions;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.jspecify.annotations.Nullable;

/**
 * The body of a prefill node's {@code POST <path>/v1/leases/revoke}: the router asks the prefill
 * node to give back at once the blocks it holds for a decode node that will never read them (the
 * client went away after prefill). Read as strictly as a {@link CompletionRequest}.
 *
 * @param requestId the {@code request_id} of the {@code kv_transfer_params} the prefill node
 *     returned
 * @param reason why, for the prefill node's log; at most {@value #MAX_REASON} characters
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RevokeRequest(
    @JsonProperty("request_id") @Nullable String requestId, @Nullable String reason) {

  /** The longest reason accepted. */
  public static final int MAX_REASON = 256;

  /**
   * Checks that the request names a request and gives a reason of bounded length.
   *
   * @throws InvalidCompletionRequestException naming the field
   */
  public void validate() {
    if (requestId == null || requestId.isEmpty()) {
      throw new InvalidCompletionRequestException(
          "request_id",
          "request_id must be a non-empty string: the request_id of the kv_transfer_params the"
              + " prefill node returned");
    }
    if (reason != null && reason.length() > MAX_REASON) {
      throw new InvalidCompletionRequestException(
          "reason", "reason must be at most " + MAX_REASON + " characters, got " + reason.length());
    }
  }

  /** The reason, or a default one. */
  public String reasonOrDefault() {
    return reason == null || reason.isEmpty() ? "revoked by a client of the prefill node" : reason;
  }
}
