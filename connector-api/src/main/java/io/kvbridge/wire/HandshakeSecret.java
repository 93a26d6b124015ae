package io.kvbridge.wire;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A deployment's shared handshake secret: both ends of a handshake prove they know it with
 * HMAC-SHA256 over the conversation's nonces and frames, so no metadata, layout or memory
 * description leaves a producer for a peer that does not know it, and a consumer trusts only a
 * producer that does. The secret itself never travels and is never printed.
 *
 * <p>Immutable; safe for use from any thread.
 */
public final class HandshakeSecret {

  /** The shortest secret accepted, in bytes of UTF-8. */
  public static final int MIN_BYTES = 16;

  /** The size of a MAC in bytes. */
  public static final int MAC_BYTES = 32;

  private final SecretKeySpec key;

  private HandshakeSecret(byte[] secret) {
    this.key = new SecretKeySpec(secret, "HmacSHA256");
  }

  /**
   * The secret {@code text} (its UTF-8 bytes).
   *
   * @throws IllegalArgumentException if it is shorter than {@value #MIN_BYTES} bytes; the message
   *     never quotes it
   */
  public static HandshakeSecret of(String text) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    if (bytes.length < MIN_BYTES) {
      throw new IllegalArgumentException(
          "the handshake secret must be at least "
              + MIN_BYTES
              + " bytes of UTF-8, got "
              + bytes.length);
    }
    return new HandshakeSecret(bytes);
  }

  /** HMAC-SHA256 of {@code domain} (ASCII) followed by each part, in order. */
  byte[] mac(String domain, byte[]... parts) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(key);
      mac.update(domain.getBytes(StandardCharsets.US_ASCII));
      for (byte[] part : parts) {
        mac.update(part);
      }
      return mac.doFinal();
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException("every JDK provides HmacSHA256", e);
    }
  }

  /** Whether {@code presented} is the MAC of the parts, compared in constant time. */
  boolean verify(byte[] presented, String domain, byte[]... parts) {
    return MessageDigest.isEqual(presented, mac(domain, parts));
  }

  /** Never shows the secret. */
  @Override
  public String toString() {
    return "HandshakeSecret[redacted]";
  }
}
