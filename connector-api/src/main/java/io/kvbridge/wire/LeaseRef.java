package io.kvbridge.wire;

/**
 * Names a lease on P as a consumer knows it.
 *
 * @param requestId the request's id on P
 * @param token the lease's secret
 */
public record LeaseRef(String requestId, String token) {}
