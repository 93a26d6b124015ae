package io.kvbridge.lease;

import java.security.MessageDigest;
import java.util.Objects;

/**
 * A consumer's claim about its read of a lease: the read it is about to make (a confirmation) or
 * made (a completion). It names the consumer, the read digest it presents, the leading tokens it
 * skips, and the {@link ReadCheck} of the claim against a lease's binding. The table remembers, per
 * lease and consumer, the digest and skip it confirmed, and acknowledges a completion only for the
 * same ones.
 *
 * <p>Immutable: a caller may present one claim object any number of times.
 */
public final class ReadClaim {

  private final String consumerId;
  private final byte[] readDigest;
  private final int skipTokens;
  private final ReadCheck check;

  /**
   * A claim by {@code consumerId}.
   *
   * @param readDigest the digest the consumer presents, copied; opaque to the table
   * @param skipTokens the lease's leading tokens the consumer does not read
   * @param check whether the claim matches a lease's binding
   * @throws IllegalArgumentException if {@code skipTokens} is negative or the digest empty
   */
  public ReadClaim(String consumerId, byte[] readDigest, int skipTokens, ReadCheck check) {
    this.consumerId = Objects.requireNonNull(consumerId, "consumerId");
    this.check = Objects.requireNonNull(check, "check");
    if (readDigest.length == 0) {
      throw new IllegalArgumentException("a read claim needs a read digest");
    }
    if (skipTokens < 0) {
      throw new IllegalArgumentException("skipTokens must not be negative, got " + skipTokens);
    }
    this.readDigest = readDigest.clone();
    this.skipTokens = skipTokens;
  }

  /** The consumer that makes the claim. */
  public String consumerId() {
    return consumerId;
  }

  /** The lease's leading tokens the consumer does not read. */
  public int skipTokens() {
    return skipTokens;
  }

  /** Whether the claim matches a lease granted with {@code binding}. */
  boolean matches(byte[] binding) {
    return check.matches(binding);
  }

  /**
   * Whether this claim is the read of {@code digest} skipping {@code skip} tokens; in time
   * independent of where the digests differ, and without allocating.
   */
  boolean isRead(byte[] digest, int skip) {
    return MessageDigest.isEqual(digest, readDigest) & skip == skipTokens;
  }

  /** Copies the digest into {@code into} when it fits, or into a new array; returns the copy. */
  byte[] copyDigest(byte[] into) {
    byte[] target =
        into != null && into.length == readDigest.length ? into : new byte[readDigest.length];
    System.arraycopy(readDigest, 0, target, 0, readDigest.length);
    return target;
  }
}
