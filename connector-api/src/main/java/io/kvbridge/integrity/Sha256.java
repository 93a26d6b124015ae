package io.kvbridge.integrity;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/** SHA-256 instances; every JDK provides the algorithm. */
final class Sha256 {

  private Sha256() {}

  static MessageDigest newDigest() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK provides SHA-256", e);
    }
  }

  static void putInt(MessageDigest digest, int value) {
    digest.update((byte) (value >>> 24));
    digest.update((byte) (value >>> 16));
    digest.update((byte) (value >>> 8));
    digest.update((byte) value);
  }
}
