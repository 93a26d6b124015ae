package io.kvbridge.sample.engine;

import java.util.concurrent.CompletableFuture;

/** A request to cancel request {@code requestId} for {@code why}, and what came of it. */
record CancelRequest(String requestId, String why, CompletableFuture<CancelOutcome> done) {}
