package io.kvbridge.sample.router;

/**
 * What the router did since start.
 *
 * @param requests completion requests received
 * @param served requests answered with the decode node's completion
 * @param dropped requests dropped after prefill by fault injection
 * @param failed requests answered with an error for any other reason
 */
public record RouterStats(long requests, long served, long dropped, long failed) {}
