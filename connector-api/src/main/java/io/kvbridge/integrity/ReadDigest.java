package io.kvbridge.integrity;

import io.kvbridge.layout.KvLayout;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

/**
 * The digest of exactly what a consumer reads under a lease, in three parts that both sides compute
 * from values they verified:
 *
 * <ul>
 *   <li>the lease's <em>binding</em>: the producer's request id, the prompt digest (D compared it
 *       with its own prompt), the tokens and the block ids in token order — P computes it when it
 *       grants the lease ({@link #binding});
 *   <li>the <em>shape</em>: the layouts of the producer's ranks and of the consumer's ranks, as
 *       exchanged in the handshake ({@link #shape}); with the binding it fixes every byte the
 *       transfer planner reads, rank by rank;
 *   <li>the tokens the consumer skips because it holds them already.
 * </ul>
 *
 * D presents the digest when it asks P to confirm the lease and with its completion; P computes it
 * from the lease, the consumer's layouts and the skip, and answers NACK, ending nothing, when the
 * two differ. So one lease's token opens only that lease's blocks, in order, for the prompt they
 * were computed for, read in the shape both sides agreed on.
 *
 * <p>{@code binding = SHA-256("kvbridge/lease/2" ‖ u16 len ‖ request id (UTF-8) ‖ prompt digest (32
 * bytes) ‖ u32 tokens ‖ u32 n ‖ n × u32 block id)}; {@code shape = SHA-256("kvbridge/shape/1" ‖ u8
 * p ‖ p × producer layout ‖ u8 d ‖ d × consumer layout)} (layouts in {@link KvLayout#encode()}'s
 * form); {@code read digest = SHA-256("kvbridge/read/2" ‖ binding ‖ shape ‖ u32 skip tokens)};
 * integers big-endian; each 32 bytes.
 *
 * <p>Immutable.
 */
public final class ReadDigest {

  /** The size of a digest in bytes. */
  public static final int BYTES = 32;

  private static final byte[] READ = "kvbridge/read/2".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] LEASE = "kvbridge/lease/2".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] SHAPE = "kvbridge/shape/1".getBytes(StandardCharsets.US_ASCII);

  private final byte[] bytes;

  private ReadDigest(byte[] bytes) {
    this.bytes = bytes;
  }

  /**
   * The binding of a lease.
   *
   * @param producerRequestId the request id on P
   * @param promptDigest the {@link PromptDigest} of the tokens the blocks hold
   * @param tokens how many tokens the blocks hold
   * @param producerBlockIds P's block ids, in token order
   */
  public static byte[] binding(
      String producerRequestId, String promptDigest, int tokens, List<Integer> producerBlockIds) {
    MessageDigest sha = Sha256.newDigest();
    sha.update(LEASE);
    byte[] id = producerRequestId.getBytes(StandardCharsets.UTF_8);
    sha.update((byte) (id.length >>> 8));
    sha.update((byte) id.length);
    sha.update(id);
    sha.update(HexFormat.of().parseHex(promptDigest));
    Sha256.putInt(sha, tokens);
    Sha256.putCountedInts(sha, producerBlockIds);
    return sha.digest();
  }

  /** The shape of a read between the producer's ranks and the consumer's ranks. */
  public static byte[] shape(List<KvLayout> producerRanks, List<KvLayout> consumerRanks) {
    MessageDigest sha = Sha256.newDigest();
    sha.update(SHAPE);
    sha.update((byte) producerRanks.size());
    producerRanks.forEach(l -> sha.update(l.encode()));
    sha.update((byte) consumerRanks.size());
    consumerRanks.forEach(l -> sha.update(l.encode()));
    return sha.digest();
  }

  /** The digest of reading a lease of {@code binding} in {@code shape}, skipping {@code skip}. */
  public static ReadDigest of(byte[] binding, byte[] shape, int skipTokens) {
    MessageDigest sha = Sha256.newDigest();
    sha.update(READ);
    sha.update(binding);
    sha.update(shape);
    Sha256.putInt(sha, skipTokens);
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
