package io.kvbridge.integrity;

/** Checks on hex text received from outside. */
public final class Hex {

  private Hex() {}

  /** Whether {@code candidate} is exactly {@code length} lowercase hexadecimal digits. */
  public static boolean isLowercaseHex(String candidate, int length) {
    if (candidate == null || candidate.length() != length) {
      return false;
    }
    for (int i = 0; i < length; i++) {
      char c = candidate.charAt(i);
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
        return false;
      }
    }
    return true;
  }
}
