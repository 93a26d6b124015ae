package io.kvbridge.tck;

import io.kvbridge.spi.TokenIds;
import java.util.Random;

/**
 * Prompts for tests: the same ids for the same request, so a longer prompt extends a shorter one.
 */
public final class Prompts {

  private Prompts() {}

  /** The first {@code tokens} token ids of request {@code requestId}'s prompt. */
  public static TokenIds of(String requestId, int tokens) {
    Random ids = new Random(requestId.hashCode());
    int[] prompt = new int[tokens];
    for (int i = 0; i < tokens; i++) {
      prompt[i] = ids.nextInt(50_000);
    }
    return TokenIds.of(prompt);
  }
}
