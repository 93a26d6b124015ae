package io.kvbridge.wire;

import java.nio.charset.StandardCharsets;

/**
 * A deployment's shared handshake secret. Each conversation derives keys of its own from it and
 * both ends' nonces ({@link HandshakeKeys}): P proves it knows the secret before D sends anything
 * of its own, and the request and the answer travel encrypted and authenticated, so no metadata,
 * layout or memory description leaves either side for a peer that does not know it. The secret
 * itself never travels and is never printed.
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
   * The keys of one conversation: derived from this secret and both nonces, so each connection has
   * keys of its own.
   */
  public HandshakeKeys keysFor(byte[] producerNonce, byte[] consumerNonce) {
    return HandshakeKeys.derive(secret, producerNonce, consumerNonce);
  }

  /** Never shows the secret. */
  @Override
  public String toString() {
    return "HandshakeSecret[redacted]";
  }
}
