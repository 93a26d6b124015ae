package io.kvbridge.events;

import io.kvbridge.integrity.Sha256;
import io.kvbridge.spi.TokenIds;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Objects;

/**
 * The chained hashes that name a prompt's full blocks of KV, the same on every engine for the same
 * model, block size and tokens (specified byte for byte in {@code docs/events.md}):
 *
 * <ul>
 *   <li>the root is the first eight bytes, big-endian, of SHA-256 over the UTF-8 bytes of {@code
 *       kvbridge/block-hash/1}, a zero byte, the model's name in UTF-8, a zero byte, and the tokens
 *       per block as a 32-bit big-endian integer;
 *   <li>block {@code i} (tokens {@code [i × n, (i + 1) × n)}) is the first eight bytes of SHA-256
 *       over the hash before it (the root for block 0) as eight big-endian bytes, then each of its
 *       tokens as a 32-bit big-endian integer.
 * </ul>
 *
 * <p>Because each hash covers the one before it, a block's hash names the whole prefix through that
 * block: two engines holding a block of the same hash hold the KV of the same tokens from the
 * prompt's start. A partly filled last block has no hash: only full blocks are published.
 *
 * <p>Immutable and thread-safe.
 */
public final class BlockHashes {

  /** The domain-separation label the root hash starts with. */
  public static final String LABEL = "kvbridge/block-hash/1";

  private final String model;
  private final int tokensPerBlock;
  private final long root;

  /**
   * Hashes of {@code model}'s blocks of {@code tokensPerBlock} tokens.
   *
   * @throws IllegalArgumentException if the model is blank or the block size is below 1
   */
  public BlockHashes(String model, int tokensPerBlock) {
    Objects.requireNonNull(model, "model");
    if (model.isBlank()) {
      throw new IllegalArgumentException("the model of block hashes must not be blank");
    }
    if (tokensPerBlock < 1) {
      throw new IllegalArgumentException(
          "tokens per block must be at least 1, got " + tokensPerBlock);
    }
    this.model = model;
    this.tokensPerBlock = tokensPerBlock;
    MessageDigest digest = Sha256.newDigest();
    digest.update(LABEL.getBytes(StandardCharsets.UTF_8));
    digest.update((byte) 0);
    digest.update(model.getBytes(StandardCharsets.UTF_8));
    digest.update((byte) 0);
    digest.update(ByteBuffer.allocate(Integer.BYTES).putInt(tokensPerBlock).array());
    this.root = ByteBuffer.wrap(digest.digest()).getLong();
  }

  /** The model these hashes are of. */
  public String model() {
    return model;
  }

  /** Tokens per block. */
  public int tokensPerBlock() {
    return tokensPerBlock;
  }

  /** The hash before block 0. */
  public long root() {
    return root;
  }

  /** The hashes of the full blocks of {@code prompt}, in order. */
  public long[] of(TokenIds prompt) {
    return of(prompt.toArray());
  }

  /** The hashes of the full blocks of {@code tokens}, in order. */
  public long[] of(int[] tokens) {
    long[] hashes = new long[tokens.length / tokensPerBlock];
    Hasher hasher = new Hasher();
    long parent = root;
    for (int b = 0; b < hashes.length; b++) {
      parent = hasher.next(parent, tokens, b * tokensPerBlock);
      hashes[b] = parent;
    }
    return hashes;
  }

  /** Hashes one block after another; one per thread at a time. */
  final class Hasher {
    private final MessageDigest digest = Sha256.newDigest();
    private final ByteBuffer input =
        ByteBuffer.allocate(Long.BYTES + tokensPerBlock * Integer.BYTES);

    /**
     * The hash of the block of {@code tokens} from {@code from}, after the block {@code parent}.
     */
    long next(long parent, int[] tokens, int from) {
      input.clear();
      input.putLong(parent);
      for (int t = from; t < from + tokensPerBlock; t++) {
        input.putInt(tokens[t]);
      }
      digest.update(input.array(), 0, input.position());
      return ByteBuffer.wrap(digest.digest()).getLong();
    }
  }
}
