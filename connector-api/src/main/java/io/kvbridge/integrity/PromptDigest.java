package io.kvbridge.integrity;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;

/**
 * The digest of the prompt tokens a lease's blocks hold KV for: P puts it in the transfer
 * parameters and binds the lease to it; D computes it from its own request's prompt, so KV computed
 * for one prompt is never served for another.
 *
 * <p>{@code SHA-256("kvbridge/prompt/1" || u32 count || count × i32 token id)}, integers
 * big-endian, written as 64 lowercase hex digits.
 */
public final class PromptDigest {

  /** The length of a digest in hex digits. */
  public static final int HEX_LENGTH = 64;

  private static final byte[] DOMAIN = "kvbridge/prompt/1".getBytes(StandardCharsets.US_ASCII);

  private PromptDigest() {}

  /**
   * The digest of the first {@code count} of {@code tokenIds}.
   *
   * @throws IllegalArgumentException if {@code count} is negative or exceeds the tokens
   */
  public static String of(int[] tokenIds, int count) {
    if (count < 0 || count > tokenIds.length) {
      throw new IllegalArgumentException(
          "cannot digest " + count + " of " + tokenIds.length + " prompt tokens");
    }
    MessageDigest sha = Sha256.newDigest();
    sha.update(DOMAIN);
    Sha256.putCountedInts(sha, tokenIds, count);
    return HexFormat.of().formatHex(sha.digest());
  }

  /** Whether {@code candidate} has the form of a digest (64 lowercase hex digits). */
  public static boolean isWellFormed(String candidate) {
    return Hex.isLowercaseHex(candidate, HEX_LENGTH);
  }
}
