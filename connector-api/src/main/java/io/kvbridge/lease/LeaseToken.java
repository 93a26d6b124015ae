package io.kvbridge.lease;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Objects;

/**
 * The unguessable secret that proves a consumer was handed a lease's transfer parameters.
 *
 * <p>128 random bits from a {@link SecureRandom}, written as 32 lowercase hex digits. Comparison
 * with an untrusted value is constant-time ({@link #matches(String)}).
 */
public record LeaseToken(String value) {

  private static final int HEX_LENGTH = 32;
  private static final SecureRandom RANDOM = new SecureRandom();

  /** Checks the form of a token received from outside; throws with the offending value if bad. */
  public LeaseToken {
    Objects.requireNonNull(value, "value");
    if (!isWellFormed(value)) {
      throw new IllegalArgumentException(
          "a lease token is " + HEX_LENGTH + " lowercase hex digits, got '" + value + "'");
    }
  }

  /** Draws a fresh token. */
  public static LeaseToken random() {
    byte[] bits = new byte[HEX_LENGTH / 2];
    RANDOM.nextBytes(bits);
    return new LeaseToken(HexFormat.of().formatHex(bits));
  }

  /** Whether {@code candidate} has the form of a token (it may still be a wrong one). */
  public static boolean isWellFormed(String candidate) {
    if (candidate == null || candidate.length() != HEX_LENGTH) {
      return false;
    }
    for (int i = 0; i < HEX_LENGTH; i++) {
      char c = candidate.charAt(i);
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
        return false;
      }
    }
    return true;
  }

  /** Compares with an untrusted candidate in time independent of where they differ. */
  public boolean matches(String candidate) {
    if (candidate == null) {
      return false;
    }
    return MessageDigest.isEqual(
        value.getBytes(StandardCharsets.US_ASCII), candidate.getBytes(StandardCharsets.US_ASCII));
  }

  /** Shows only a prefix: tokens are secrets and must not end up whole in logs. */
  @Override
  public String toString() {
    return value.substring(0, 6) + "…";
  }
}
