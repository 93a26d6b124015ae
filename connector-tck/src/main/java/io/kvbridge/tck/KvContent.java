package io.kvbridge.tck;

import io.kvbridge.layout.KvLayout;
import java.util.Optional;

/**
 * The KV of a test request: every byte of every vector follows from the request's seed and the
 * vector's (layer, plane, head, token, element), so that any rank of an engine of any shape can be
 * written and checked token by token, wherever its layout puts each vector. Stateless.
 */
public final class KvContent {

  private KvContent() {}

  /**
   * The value of element {@code element} of the KV vector of {@code head} at {@code token}, layer
   * {@code layer}, plane {@code plane} of the request with {@code seed}.
   */
  public static byte value(long seed, int layer, int plane, int head, int token, int element) {
    long h = seed;
    h = h * 31 + layer;
    h = h * 31 + plane;
    h = h * 31 + head;
    h = h * 1_000_003 + token;
    h = h * 31 + element;
    h ^= h >>> 29;
    h *= 0xbf58476d1ce4e5b9L;
    h ^= h >>> 32;
    return (byte) h;
  }

  /** Receives the KV vectors of a block: which each is and where it lies in the block. */
  @FunctionalInterface
  public interface VectorVisitor {
    /** Vector of {@code head} at the block's {@code token}-th token starts at {@code offset}. */
    void visit(int layer, int plane, int head, int token, long offsetInBlock);
  }

  /** Visits the vectors of a block's first {@code usedTokens} tokens, of every head it holds. */
  public static void forEachVector(KvLayout layout, int usedTokens, VectorVisitor visitor) {
    for (int layer = 0; layer < layout.layers(); layer++) {
      for (int plane = 0; plane < layout.planes(); plane++) {
        for (int head = layout.headStart();
            head < layout.headStart() + layout.headCount();
            head++) {
          for (int token = 0; token < usedTokens; token++) {
            visitor.visit(
                layer, plane, head, token, layout.offsetInBlock(layer, plane, head, token));
          }
        }
      }
    }
  }

  /**
   * Writes into {@code block}, one block of {@code layout}, the KV of request {@code seed}'s tokens
   * {@code [firstToken, firstToken + usedTokens)}, each vector where the layout puts it; the other
   * bytes are left as they are.
   */
  public static void write(
      KvLayout layout, byte[] block, long seed, int firstToken, int usedTokens) {
    int vector = layout.vectorBytes();
    forEachVector(
        layout,
        usedTokens,
        (layer, plane, head, token, offset) -> {
          for (int e = 0; e < vector; e++) {
            block[(int) offset + e] = value(seed, layer, plane, head, firstToken + token, e);
          }
        });
  }

  /**
   * {@link #write} of the layers {@code [fromLayer, toLayer)} alone, as a forward pass writes a
   * request's KV layer by layer; the other layers' bytes are left as they are.
   */
  public static void writeLayers(
      KvLayout layout,
      byte[] block,
      long seed,
      int firstToken,
      int usedTokens,
      int fromLayer,
      int toLayer) {
    int vector = layout.vectorBytes();
    forEachVector(
        layout,
        usedTokens,
        (layer, plane, head, token, offset) -> {
          if (layer >= fromLayer && layer < toLayer) {
            for (int e = 0; e < vector; e++) {
              block[(int) offset + e] = value(seed, layer, plane, head, firstToken + token, e);
            }
          }
        });
  }

  /**
   * The first byte of {@code block}, one block of {@code layout} holding the tokens from {@code
   * firstToken} on, where its first {@code usedTokens} tokens differ from request {@code seed}'s
   * KV, described by (layer, plane, head, token, byte); or nothing if they hold it exactly.
   */
  public static Optional<String> firstDifference(
      KvLayout layout, byte[] block, long seed, int firstToken, int usedTokens) {
    int vector = layout.vectorBytes();
    for (int layer = 0; layer < layout.layers(); layer++) {
      for (int plane = 0; plane < layout.planes(); plane++) {
        for (int head = layout.headStart();
            head < layout.headStart() + layout.headCount();
            head++) {
          for (int token = 0; token < usedTokens; token++) {
            long at = layout.offsetInBlock(layer, plane, head, token);
            for (int e = 0; e < vector; e++) {
              byte expected = value(seed, layer, plane, head, firstToken + token, e);
              if (block[(int) at + e] != expected) {
                return Optional.of(
                    String.format(
                        "token %d, layer %d, plane %d, head %d, byte %d: %d, expected %d",
                        firstToken + token, layer, plane, head, e, block[(int) at + e], expected));
              }
            }
          }
        }
      }
    }
    return Optional.empty();
  }
}
