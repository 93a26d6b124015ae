package io.kvbridge.events;

import io.kvbridge.net.HandshakeSecret;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Authenticates KV events with a deployment's shared secret, so that a reader holding the same
 * secret applies only what an engine of the deployment published: each batch and snapshot carries a
 * {@code mac} (specified byte for byte, with a vector, in {@code docs/events.md}):
 *
 * <ul>
 *   <li>the key is HMAC-SHA256 keyed with the UTF-8 bytes of {@value #KEY_LABEL} over the secret's
 *       UTF-8 bytes ({@link HandshakeSecret#extract}), so it differs from every handshake key;
 *   <li>the {@code mac} is HMAC-SHA256 under that key over the message's canonical bytes, written
 *       as 64 lowercase hexadecimal digits.
 * </ul>
 *
 * <p>Canonical bytes, every integer big-endian, every string its UTF-8 bytes after their length as
 * a 32-bit integer: a batch is the string {@value #BATCH_LABEL}, the engine id, the incarnation and
 * the sequence number as 64-bit integers, the number of events as a 32-bit integer, then each event
 * as one byte (1 stored, 2 removed, 3 cleared), the number of its hashes as a 32-bit integer and
 * each hash as a 64-bit integer. A snapshot is the string {@value #SNAPSHOT_LABEL}, the engine id,
 * the incarnation and the sequence number, the model, the tokens per block as a 32-bit integer, the
 * number of hashes as a 32-bit integer and each hash.
 *
 * <p>The {@code mac} proves who published, not that the publisher tells the truth: any engine that
 * knows the secret can publish under any engine id. What it rules out is a process outside the
 * deployment feeding a router's index.
 *
 * <p>Immutable and thread-safe.
 */
public final class EventAuthenticator {

  /** The salt the events' key is extracted with from the secret. */
  public static final String KEY_LABEL = "kvbridge/kv-events/1";

  /** The label a batch's canonical bytes start with. */
  public static final String BATCH_LABEL = "kvbridge/kv-event-batch/1";

  /** The label a snapshot's canonical bytes start with. */
  public static final String SNAPSHOT_LABEL = "kvbridge/kv-snapshot/1";

  /** The JSON field that carries the MAC. */
  public static final String FIELD = "mac";

  private static final String HMAC = "HmacSHA256";

  private final SecretKeySpec key;

  /** Authenticates events with {@code secret}. */
  public EventAuthenticator(HandshakeSecret secret) {
    Objects.requireNonNull(secret, "secret");
    this.key = new SecretKeySpec(secret.extract(bytes(KEY_LABEL)), HMAC);
  }

  /** The {@code mac} of {@code batch}: 64 lowercase hexadecimal digits. */
  public String mac(KvEventBatch batch) {
    return HexFormat.of().formatHex(hmac(canonical(batch)));
  }

  /** The {@code mac} of {@code snapshot}: 64 lowercase hexadecimal digits. */
  public String mac(CacheSnapshot snapshot) {
    return HexFormat.of().formatHex(hmac(canonical(snapshot)));
  }

  /** {@code batch}'s JSON-ready form with its {@code mac}. */
  public Map<String, Object> signed(KvEventBatch batch) {
    Map<String, Object> map = batch.toMap();
    map.put(FIELD, mac(batch));
    return map;
  }

  /** {@code snapshot}'s JSON-ready form with its {@code mac}. */
  public Map<String, Object> signed(CacheSnapshot snapshot) {
    Map<String, Object> map = snapshot.toMap();
    map.put(FIELD, mac(snapshot));
    return map;
  }

  /**
   * Whether {@code map}'s {@code mac} is {@code batch}'s (compared in constant time); false if it
   * has none.
   */
  public boolean verify(KvEventBatch batch, Map<String, ?> map) {
    return matches(map.get(FIELD), hmac(canonical(batch)));
  }

  /**
   * Whether {@code map}'s {@code mac} is {@code snapshot}'s (compared in constant time); false if
   * it has none.
   */
  public boolean verify(CacheSnapshot snapshot, Map<String, ?> map) {
    return matches(map.get(FIELD), hmac(canonical(snapshot)));
  }

  /** Never shows the key. */
  @Override
  public String toString() {
    return "EventAuthenticator[redacted]";
  }

  private static boolean matches(Object given, byte[] expected) {
    if (!(given instanceof String text) || text.length() != expected.length * 2) {
      return false;
    }
    // Compared as text in constant time: a malformed mac is simply unequal.
    return MessageDigest.isEqual(
        text.getBytes(StandardCharsets.UTF_8),
        HexFormat.of().formatHex(expected).getBytes(StandardCharsets.UTF_8));
  }

  private byte[] hmac(byte[] message) {
    try {
      Mac mac = Mac.getInstance(HMAC);
      mac.init(key);
      return mac.doFinal(message);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("every JDK provides " + HMAC, e);
    }
  }

  static byte[] canonical(KvEventBatch batch) {
    Canonical out = new Canonical();
    out.string(BATCH_LABEL);
    out.string(batch.engineId());
    out.u64(batch.incarnation());
    out.u64(batch.sequence());
    out.u32(batch.events().size());
    for (KvEvent event : batch.events()) {
      if (event instanceof KvEvent.Stored stored) {
        out.u8(1);
        out.hashes(stored.blockHashes());
      } else if (event instanceof KvEvent.Removed removed) {
        out.u8(2);
        out.hashes(removed.blockHashes());
      } else {
        out.u8(3);
        out.u32(0);
      }
    }
    return out.bytes();
  }

  static byte[] canonical(CacheSnapshot snapshot) {
    Canonical out = new Canonical();
    out.string(SNAPSHOT_LABEL);
    out.string(snapshot.engineId());
    out.u64(snapshot.incarnation());
    out.u64(snapshot.sequence());
    out.string(snapshot.model());
    out.u32(snapshot.tokensPerBlock());
    out.hashes(snapshot.blockHashes());
    return out.bytes();
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /** Writes the canonical form: big-endian integers, length-prefixed UTF-8 strings. */
  private static final class Canonical {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    void string(String text) {
      byte[] utf8 = EventAuthenticator.bytes(text);
      u32(utf8.length);
      out.writeBytes(utf8);
    }

    void u8(int value) {
      out.write(value);
    }

    void u32(int value) {
      out.writeBytes(ByteBuffer.allocate(Integer.BYTES).putInt(value).array());
    }

    void u64(long value) {
      out.writeBytes(ByteBuffer.allocate(Long.BYTES).putLong(value).array());
    }

    void hashes(List<Long> hashes) {
      u32(hashes.size());
      for (long hash : hashes) {
        u64(hash);
      }
    }

    byte[] bytes() {
      return out.toByteArray();
    }
  }
}
