package io.kvbridge.sample.router;

/**
 * What the router knows of one node.
 *
 * @param url the node's base URL ({@code <url>/v1/completions})
 * @param healthy whether the router sends it requests
 * @param health why: {@code not probed yet}, {@code health UP}, or what made the router skip it
 * @param inFlight the router's calls to it in progress
 * @param served calls it answered with a completion
 * @param failed calls that failed: no answer, a timeout, or an error answer
 * @param cancelled calls the router gave up because the client went away
 */
public record NodeStats(
    String url,
    boolean healthy,
    String health,
    int inFlight,
    long served,
    long failed,
    long cancelled) {}
