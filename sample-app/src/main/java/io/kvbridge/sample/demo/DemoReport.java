package io.kvbridge.sample.demo;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The demo run's summary once it is known; what the {@code info} endpoint shows and tests await.
 *
 * <p>Thread-safe.
 */
public final class DemoReport {

  private final CompletableFuture<DemoSummary> summary = new CompletableFuture<>();

  /** Completes when the demo has printed its summary; fails if the demo could not run. */
  public CompletableFuture<DemoSummary> summary() {
    return summary;
  }

  /** The summary, if the demo has finished. */
  public Optional<DemoSummary> latest() {
    return summary.isDone() && !summary.isCompletedExceptionally()
        ? Optional.of(summary.join())
        : Optional.empty();
  }

  void complete(DemoSummary value) {
    summary.complete(value);
  }

  void fail(Throwable cause) {
    summary.completeExceptionally(cause);
  }
}
