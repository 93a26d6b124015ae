package io.kvbridge.wire;

import io.kvbridge.net.HandshakeSecret;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The keys of one authenticated handshake conversation, derived from the deployment's secret and
 * both nonces with HKDF-SHA256 (RFC 5869), as {@code docs/protocol.md} specifies:
 *
 * <pre>
 * prk            = HMAC-SHA256(salt = producer nonce ‖ consumer nonce, the secret's UTF-8 bytes)
 * proof key      = HMAC-SHA256(prk, "kvbridge/handshake/5/proof"   ‖ 0x01)
 * request key    = HMAC-SHA256(prk, "kvbridge/handshake/5/request" ‖ 0x01)
 * answer key     = HMAC-SHA256(prk, "kvbridge/handshake/5/answer"  ‖ 0x01)
 * proof          = HMAC-SHA256(proof key, greeting frame ‖ challenge frame)
 * sealed frame   = header ‖ AES-256-GCM(key, IV = 12 zero bytes, AAD = header, inner frame)
 * </pre>
 *
 * <p>Each key seals exactly one frame (the request with the request key, the answer with the answer
 * key), so a fixed IV never repeats under one key; separate keys per direction make a reflected
 * frame fail to open, and fresh nonces per connection make a replayed one fail.
 *
 * <p>Immutable; safe for use from any thread.
 */
public final class HandshakeKeys {

  /** The size of P's proof in bytes. */
  public static final int PROOF_BYTES = 32;

  /** The size of the AES-GCM authentication tag a sealed frame ends with. */
  public static final int TAG_BYTES = 16;

  private static final String HMAC = "HmacSHA256";
  private static final byte[] NO_IV = new byte[12];
  private static final byte[] PROOF_INFO = info("proof");
  private static final byte[] REQUEST_INFO = info("request");
  private static final byte[] ANSWER_INFO = info("answer");

  private final byte[] proofKey;
  private final byte[] requestKey;
  private final byte[] answerKey;

  private HandshakeKeys(byte[] proofKey, byte[] requestKey, byte[] answerKey) {
    this.proofKey = proofKey;
    this.requestKey = requestKey;
    this.answerKey = answerKey;
  }

  /**
   * The keys of one conversation whose greeting and challenge carried these nonces: derived from
   * {@code secret} and both nonces, so each connection has keys of its own.
   */
  public static HandshakeKeys derive(
      HandshakeSecret secret, byte[] producerNonce, byte[] consumerNonce) {
    byte[] salt = new byte[producerNonce.length + consumerNonce.length];
    System.arraycopy(producerNonce, 0, salt, 0, producerNonce.length);
    System.arraycopy(consumerNonce, 0, salt, producerNonce.length, consumerNonce.length);
    byte[] prk = secret.extract(salt);
    return new HandshakeKeys(
        expand(prk, PROOF_INFO), expand(prk, REQUEST_INFO), expand(prk, ANSWER_INFO));
  }

  /** P's proof that it knows the secret, over the greeting and challenge frames as sent. */
  public byte[] proof(byte[] greetingFrame, byte[] challengeFrame) {
    return hmac(proofKey, greetingFrame, challengeFrame);
  }

  /** Whether {@code presented} is the proof of these frames, compared in constant time. */
  public boolean proves(byte[] presented, byte[] greetingFrame, byte[] challengeFrame) {
    return MessageDigest.isEqual(presented, proof(greetingFrame, challengeFrame));
  }

  /** D's request frame, sealed. */
  public byte[] sealRequest(byte[] requestFrame) {
    return seal(requestKey, requestFrame);
  }

  /** P's answer frame, sealed. */
  public byte[] sealAnswer(byte[] answerFrame) {
    return seal(answerKey, answerFrame);
  }

  /**
   * The request frame inside a sealed frame.
   *
   * @throws HandshakeAuthenticationException if it was not sealed with this conversation's request
   *     key, or was changed
   */
  public byte[] openRequest(byte[] sealedFrame) throws MalformedMessageException {
    return open(requestKey, sealedFrame, "the request");
  }

  /**
   * The answer frame inside a sealed frame.
   *
   * @throws HandshakeAuthenticationException if it was not sealed with this conversation's answer
   *     key, or was changed
   */
  public byte[] openAnswer(byte[] sealedFrame) throws MalformedMessageException {
    return open(answerKey, sealedFrame, "the answer");
  }

  /** The three derived keys, proof, request and answer, for the vectors of the specification. */
  public byte[][] keys() {
    return new byte[][] {proofKey.clone(), requestKey.clone(), answerKey.clone()};
  }

  private static byte[] seal(byte[] key, byte[] inner) {
    byte[] header = Handshake.sealedHeader();
    try {
      Cipher cipher = cipher(Cipher.ENCRYPT_MODE, key, header);
      byte[] frame = Arrays.copyOf(header, header.length + cipher.getOutputSize(inner.length));
      cipher.doFinal(inner, 0, inner.length, frame, header.length);
      return frame;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("every JDK provides AES/GCM/NoPadding", e);
    }
  }

  private static byte[] open(byte[] key, byte[] frame, String what)
      throws MalformedMessageException {
    byte[] header = Handshake.sealedHeader();
    if (!Handshake.isSealed(frame)) {
      throw new HandshakeAuthenticationException(
          what + " is not sealed, and this conversation requires the deployment's secret");
    }
    if (frame.length < header.length + TAG_BYTES) {
      throw new MalformedMessageException("a sealed frame too short for its tag");
    }
    try {
      Cipher cipher = cipher(Cipher.DECRYPT_MODE, key, header);
      return cipher.doFinal(frame, header.length, frame.length - header.length);
    } catch (AEADBadTagException e) {
      throw new HandshakeAuthenticationException(
          what
              + " was not sealed with this conversation's key: the peer does not know the"
              + " deployment's secret, or the frame was changed or replayed");
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("every JDK provides AES/GCM/NoPadding", e);
    }
  }

  private static Cipher cipher(int mode, byte[] key, byte[] header)
      throws GeneralSecurityException {
    Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
    cipher.init(
        mode, new SecretKeySpec(key, "AES"), new GCMParameterSpec(TAG_BYTES * Byte.SIZE, NO_IV));
    cipher.updateAAD(header);
    return cipher;
  }

  /** HKDF-Expand for one block: exactly 32 bytes of output. */
  private static byte[] expand(byte[] prk, byte[] info) {
    return hmac(prk, info, new byte[] {1});
  }

  private static byte[] hmac(byte[] key, byte[]... parts) {
    try {
      Mac mac = Mac.getInstance(HMAC);
      mac.init(new SecretKeySpec(key, HMAC));
      for (byte[] part : parts) {
        mac.update(part);
      }
      return mac.doFinal();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("every JDK provides HmacSHA256", e);
    }
  }

  private static byte[] info(String label) {
    return ("kvbridge/handshake/" + Handshake.VERSION + "/" + label)
        .getBytes(StandardCharsets.US_ASCII);
  }

  /** Never shows a key. */
  @Override
  public String toString() {
    return "HandshakeKeys[redacted]";
  }
}
