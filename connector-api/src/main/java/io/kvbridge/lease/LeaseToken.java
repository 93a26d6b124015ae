package io.kvbridge.lease;

import java.security.SecureRandom;
import java.util.Objects;

/**
 * The unguessable secret that proves a consumer was handed a lease's transfer parameters.
 *
 * <p>128 random bits from a {@link SecureRandom}, written as 32 lowercase hex digits. Comparison
 * with an untrusted value is constant-time ({@link #matches(String)}).
 */
public record LeaseToken(String value) {

  /** How many random bytes a token holds. */
  static final int BYTES = 16;

  /** The length of a token in hex digits. */
  public static final int HEX_LENGTH = 2 * BYTES;

  private static final char[] DIGITS = "0123456789abcdef".toCharArray();
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
    byte[] bits = new byte[BYTES];
    RANDOM.nextBytes(bits);
    return fromBits(bits, 0);
  }

  /** The token written by {@code BYTES} random bytes of {@code bits} from {@code offset}. */
  static LeaseToken fromBits(byte[] bits, int offset) {
    char[] hex = new char[HEX_LENGTH];
    for (int i = 0; i < BYTES; i++) {
      int b = bits[offset + i] & 0xff;
      hex[2 * i] = DIGITS[b >>> 4];
      hex[2 * i + 1] = DIGITS[b & 0xf];
    }
    return new LeaseToken(new String(hex));
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
    if (candidate == null || candidate.length() != HEX_LENGTH) {
      return false;
    }
    int difference = 0;
    for (int i = 0; i < HEX_LENGTH; i++) {
      difference |= value.charAt(i) ^ candidate.charAt(i);
    }
    return difference == 0;
  }

  /** Shows only a prefix: tokens are secrets and must not end up whole in logs. */
  @Override
  public String toString() {
    return value.substring(0, 6) + "…";
  }
}
