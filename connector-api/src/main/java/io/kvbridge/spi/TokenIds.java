package io.kvbridge.spi;

import io.kvbridge.integrity.PromptDigest;
import java.util.Arrays;

/**
 * A request's prompt as token ids, immutable. The connector binds a lease's KV to the prompt it was
 * computed for by a digest of these ids ({@link PromptDigest}).
 */
public final class TokenIds {

  private final int[] ids;

  private TokenIds(int[] ids) {
    this.ids = ids;
  }

  /** The given ids, copied. */
  public static TokenIds of(int... ids) {
    return new TokenIds(ids.clone());
  }

  /** How many tokens. */
  public int size() {
    return ids.length;
  }

  /** The id of token {@code index}. */
  public int get(int index) {
    return ids[index];
  }

  /** A copy of the ids. */
  public int[] toArray() {
    return ids.clone();
  }

  /**
   * The {@link PromptDigest} of the first {@code count} tokens.
   *
   * @throws IllegalArgumentException if {@code count} is negative or larger than {@link #size()}
   */
  public String digest(int count) {
    return PromptDigest.of(ids, count);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TokenIds other && Arrays.equals(ids, other.ids);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(ids);
  }

  @Override
  public String toString() {
    return "TokenIds[" + ids.length + " tokens]";
  }
}
