package io.kvbridge.net;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A deployment's shared handshake secret. Each conversation derives keys of its own from it and
 * both ends' nonces ({@code io.kvbridge.wire.HandshakeKeys}): P proves it knows the secret before D
 * sends anything of its own, and the request and the answer travel encrypted and authenticated, so
 * no metadata, layout or memory description leaves either side for a peer that does not know it.
 * The secret itself never travels and is never printed.
 *
 * <p>Immutable; safe for use from any thread.
 */
public final class HandshakeSecret {

  /** The shortest secret accepted, in bytes of UTF-8. */
  public static final int MIN_BYTES = 16;

  private final byte[] secret;

  private HandshakeSecret(byte[] secret) {
    this.secret = secret;
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

  /**
   * HKDF-SHA256's extract step over this secret: {@code HMAC-SHA256(salt, the secret's UTF-8
   * bytes)}, the pseudorandom key a conversation's keys are expanded from. The secret itself is
   * never handed out.
   */
  public byte[] extract(byte[] salt) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(salt, "HmacSHA256"));
      return mac.doFinal(secret);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("every JDK provides HmacSHA256", e);
    }
  }

  /** Never shows the secret. */
  @Override
  public String toString() {
    return "HandshakeSecret[redacted]";
  }
}
