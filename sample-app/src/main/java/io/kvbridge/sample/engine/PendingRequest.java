package io.kvbridge.sample.engine;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * A request an {@link Engine} took in, with its prefix cache hit once looked up; its future
 * completes when it is served or fails. Engine thread only, but for the future.
 */
final class PendingRequest {
  final EngineRequest request;
  final int[] tokens;
  final CompletableFuture<Generation> future;
  // Null until the first admission attempt looks the prompt up; MISS once the hit is released.
  PrefixCache.@Nullable Hit hit;

  PendingRequest(EngineRequest request, int[] tokens, CompletableFuture<Generation> future) {
    this.request = request;
    this.tokens = tokens;
    this.future = future;
  }

  /** Takes request {@code id} out of {@code queue}, if it is there. */
  static Optional<PendingRequest> removeById(ArrayDeque<PendingRequest> queue, String id) {
    for (Iterator<PendingRequest> it = queue.iterator(); it.hasNext(); ) {
      PendingRequest p = it.next();
      if (p.request.requestId().equals(id)) {
        it.remove();
        return Optional.of(p);
      }
    }
    return Optional.empty();
  }
}
