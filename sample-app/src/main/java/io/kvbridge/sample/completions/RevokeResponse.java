package io.kvbridge.sample.completions;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * The answer of a prefill node's {@code POST <path>/v1/leases/revoke}.
 *
 * @param requestId the request named
 * @param revoked whether a live lease was revoked; false if the request's lease had already ended
 *     (read, released, expired or revoked) or the node never held one under that id
 */
public record RevokeResponse(@JsonProperty("request_id") String requestId, boolean revoked) {}
