package io.kvbridge.spi;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Objects;

/**
 * The shape of an engine's KV cache: how many blocks, how large, and what they hold.
 *
 * @param blockCount the number of blocks in the pool
 * @param blockBytes the size of one block in bytes
 * @param tokensPerBlock how many tokens one block holds
 * @param compatibility what must match for two engines to exchange blocks (model, dtype, layout),
 *     as free text; two engines exchange blocks only when their {@link #fingerprint()}s match
 */
public record KvLayout(int blockCount, int blockBytes, int tokensPerBlock, String compatibility) {

  /** Rejects non-positive sizes. */
  public KvLayout {
    Objects.requireNonNull(compatibility, "compatibility");
    if (blockCount <= 0 || blockBytes <= 0 || tokensPerBlock <= 0) {
      throw new IllegalArgumentException(
          "block count, block bytes and tokens per block must be positive: "
              + blockCount
              + ", "
              + blockBytes
              + ", "
              + tokensPerBlock);
    }
  }

  /** The pool's total size in bytes. */
  public long totalBytes() {
    return (long) blockCount * blockBytes;
  }

  /**
   * A digest of everything that must agree between producer and consumer: block size, tokens per
   * block and the compatibility text. The block count may differ.
   */
  public String fingerprint() {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      String canonical = blockBytes + "/" + tokensPerBlock + "/" + compatibility;
      return HexFormat.of()
          .formatHex(sha.digest(canonical.getBytes(StandardCharsets.UTF_8)))
          .substring(0, 32);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK provides SHA-256", e);
    }
  }
}
