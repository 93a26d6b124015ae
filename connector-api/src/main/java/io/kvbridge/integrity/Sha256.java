package io.kvbridge.integrity;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;

/**
 * SHA-256 instances; every JDK provides the algorithm. A fresh instance is a clone of a pristine
 * one (the JDK's SHA-256 clones), which skips the provider lookup each request would otherwise pay;
 * integers go in as one big-endian array rather than byte by byte.
 */
public final class Sha256 {

  private static final MessageDigest PRISTINE = lookUp();

  private Sha256() {}

  /** A fresh SHA-256 digest. */
  public static MessageDigest newDigest() {
    try {
      return (MessageDigest) PRISTINE.clone();
    } catch (CloneNotSupportedException e) {
      return lookUp();
    }
  }

  private static MessageDigest lookUp() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK provides SHA-256", e);
    }
  }

  static void putInt(MessageDigest digest, int value) {
    digest.update(
        new byte[] {
          (byte) (value >>> 24), (byte) (value >>> 16), (byte) (value >>> 8), (byte) value
        });
  }

  /** Feeds {@code count}, then the first {@code count} of {@code values}, each big-endian. */
  static void putCountedInts(MessageDigest digest, int[] values, int count) {
    ByteBuffer bytes = ByteBuffer.allocate(Integer.BYTES * (count + 1)).putInt(count);
    bytes.asIntBuffer().put(values, 0, count);
    digest.update(bytes.array());
  }

  /** Feeds {@code values.size()}, then each of {@code values}, each big-endian. */
  static void putCountedInts(MessageDigest digest, List<Integer> values) {
    ByteBuffer bytes =
        ByteBuffer.allocate(Integer.BYTES * (values.size() + 1)).putInt(values.size());
    for (int v : values) {
      bytes.putInt(v);
    }
    digest.update(bytes.array());
  }
}
