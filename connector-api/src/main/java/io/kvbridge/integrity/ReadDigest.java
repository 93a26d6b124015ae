package io.kvbridge.integrity;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

/**
 * The digest of exactly what a consumer reads under a lease: the producer's request id, the prompt
 * digest the consumer checked against its own prompt, the block size and the producer block ids in
 * the order the consumer derived its descriptors from. P computes it when it grants the lease; D
 * computes it from the parameters it verified and presents it when it asks P to confirm the lease
 * and with its completion; P answers NACK, ending nothing, when the two differ. So one lease's
 * token opens only that lease's blocks, in order, and only for the prompt they were computed for.
 *
 * <p>{@code SHA-256("kvbridge/read/1" || u16 len || request id (UTF-8) || prompt digest (32 bytes)
 * || u32 block bytes || u32 n || n × u32 block id)}, integers big-endian; 32 bytes.
 *
 * <p>Immutable.
 */
public final class ReadDigest {

  /** The size of a digest in bytes. */
  public static final int BYTES = 32;

  private static final byte[] DOMAIN = "kvbridge/read/1".getBytes(StandardCharsets.US_ASCII);

  private final byte[] bytes;

  private ReadDigest(byte[] bytes) {
    this.bytes = bytes;
  }

  /**
   * The digest of a read.
   *
   * @param producerRequestId the request id on P
   * @param promptDigest the {@link PromptDigest} of the prompt the blocks hold
   * @param blockBytes the size of one block on P
   * @param producerBlockIds P's block ids, in the order they are read
   */
  public static ReadDigest of(
      String producerRequestId,
      String promptDigest,
      int blockBytes,
      List<Integer> producerBlockIds) {
    MessageDigest sha = Sha256.newDigest();
    sha.update(DOMAIN);
    byte[] id = producerRequestId.getBytes(StandardCharsets.UTF_8);
    sha.update((byte) (id.length >>> 8));
    sha.update((byte) id.length);
    sha.update(id);
    sha.update(HexFormat.of().parseHex(promptDigest));
    Sha256.putInt(sha, blockBytes);
    Sha256.putInt(sha, producerBlockIds.size());
    for (int block : producerBlockIds) {
      Sha256.putInt(sha, block);
    }
    return new ReadDigest(sha.digest());
  }

  /**
   * A digest received from a peer.
   *
   * @throws IllegalArgumentException unless {@code bytes} is {@value #BYTES} bytes long
   */
  public static ReadDigest fromBytes(byte[] bytes) {
    if (bytes.length != BYTES) {
      throw new IllegalArgumentException(
          "a read digest is " + BYTES + " bytes, got " + bytes.length);
    }
    return new ReadDigest(bytes.clone());
  }

  /** The digest's bytes, copied. */
  public byte[] toBytes() {
    return bytes.clone();
  }

  /** Compares with a digest from a peer in time independent of where they differ. */
  public boolean matches(ReadDigest other) {
    return MessageDigest.isEqual(bytes, other.bytes);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ReadDigest other && Arrays.equals(bytes, other.bytes);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(bytes);
  }

  /** The first bytes in hex, enough to tell digests apart in a log. */
  @Override
  public String toString() {
    return "ReadDigest[" + HexFormat.of().formatHex(bytes, 0, 6) + "…]";
  }
}
