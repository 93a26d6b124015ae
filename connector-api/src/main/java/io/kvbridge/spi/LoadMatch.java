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
   * whole prompt, then call {@link SchedulerSide#afterAllocate}; the load writes the KV of prompt
   * tokens {@code [firstToken, firstToken + externalTokens)}, the rest of the prompt is computed
   * locally. With 0 (every token the lease holds is local already): nothing is loaded and the lease
   * was released; do not call {@code afterAllocate}.
   *
   * <p>{@code firstToken} is the engine's local prefix rounded down to a multiple of both engines'
   * block sizes, because a producer block is read (and checked) whole: when it is below the local
   * prefix, the blocks holding tokens from {@code firstToken} on are written by the load, so they
   * must be the request's own, not blocks shared with other requests.
   *
   * @param firstToken the first prompt token whose KV the load writes
   * @param externalTokens how many tokens' KV the load writes
   */
  record Ready(int firstToken, int externalTokens) implements LoadMatch {

    /** Checks the counts. */
    public Ready {
      if (firstToken < 0 || externalTokens < 0) {
        throw new IllegalArgumentException(
            "a load writes tokens from >= 0, >= 0 of them; got "
                + firstToken
                + " and "
                + externalTokens);
      }
    }
  }

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
