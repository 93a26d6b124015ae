package io.kvbridge.spi;

/**
 * What a consumer's connector answers when asked how much of a new request's prompt it will load
 * from a producer ({@link SchedulerSide#matchRemote}).
 */
public sealed interface LoadMatch {

  /** The lease is not confirmed yet. */
  LoadMatch PENDING = new Pending();

  /**
   * The producer confirmed the lease. With {@code externalTokens} above 0: allocate blocks for the
   * whole prompt, then call {@link SchedulerSide#afterAllocate}; the KV of the prompt's tokens from
   * the local prefix's end up to {@code localTokens + externalTokens} is loaded, the rest computed
   * locally. With 0 (every token the lease holds is local already): nothing is loaded and the lease
   * was released; do not call {@code afterAllocate}.
   *
   * @param externalTokens prompt tokens beyond the local prefix whose KV will be loaded
   */
  record Ready(int externalTokens) implements LoadMatch {}

  /**
   * The connector is still confirming the lease with the producer (handshake, then a confirmation
   * that the lease exists for exactly these blocks and this prompt). Allocate nothing; ask again on
   * a later step. Bounded: within the handshake timeout plus the reply timeout the answer is {@link
   * Ready} or {@link Unavailable}.
   */
  record Pending() implements LoadMatch {}

  /**
   * The KV cannot be loaded; nothing was allocated or borrowed. The engine applies its {@link
   * LoadFailurePolicy}.
   *
   * @param reason why, for the error the client sees and for logs
   */
  record Unavailable(String reason) implements LoadMatch {}
}
