package io.kvbridge.lease;

import java.security.SecureRandom;

/**
 * Draws lease tokens in batches: one {@link SecureRandom#nextBytes} call fills the bits of 256
 * tokens, so a grant does not pay a system call and a synchronized mix per token.
 *
 * <p>Not thread-safe: the lease table calls it under its lock.
 */
final class TokenSource {

  private static final int TOKENS_PER_BATCH = 256;

  private final SecureRandom random = new SecureRandom();
  private final byte[] batch = new byte[TOKENS_PER_BATCH * LeaseToken.BYTES];
  private int next = batch.length;

  LeaseToken next() {
    if (next == batch.length) {
      random.nextBytes(batch);
      next = 0;
    }
    LeaseToken token = LeaseToken.fromBits(batch, next);
    // Spent bits are wiped so a heap dump shows no future or past token.
    java.util.Arrays.fill(batch, next, next + LeaseToken.BYTES, (byte) 0);
    next += LeaseToken.BYTES;
    return token;
  }
}
