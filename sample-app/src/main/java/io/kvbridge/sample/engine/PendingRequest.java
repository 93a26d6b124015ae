package io.kvbridge.sample.engine;

import io.kvbridge.spi.TransferParams;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
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

  // Told the transfer parameters of a lease granted as the prefill starts (streamed); empty when
  // the caller takes the parameters only once the prefill is done.
  private final Optional<Consumer<TransferParams>> onLeased;

  PendingRequest(
      EngineRequest request,
      int[] tokens,
      CompletableFuture<Generation> future,
      Optional<Consumer<TransferParams>> onLeased) {
    this.request = request;
    this.tokens = tokens;
    this.future = future;
    this.onLeased = onLeased;
  }

  /**
   * Whether the request's lease may be streamed: a decode node reads it, and its caller forwards
   * the parameters as soon as the lease is granted.
   */
  boolean streamable() {
    return request.remoteDecode() && onLeased.isPresent();
  }

  /** The connector granted the request's lease as its prefill starts: its caller is told. */
  void leased(TransferParams params) {
    onLeased.ifPresent(listener -> listener.accept(params));
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
