package io.kvbridge.sample.demo;

import java.util.SplittableRandom;

/**
 * The demo's prompts: repeatable for a seed, of varied lengths. About one in ten is shorter than a
 * block, so it has no full block to transfer and the decode node computes it alone.
 */
final class DemoPrompts {

  private static final String[] WORDS = {
    "disaggregated",
    "serving",
    "splits",
    "prefill",
    "and",
    "decode",
    "across",
    "nodes",
    "so",
    "each",
    "can",
    "scale",
    "on",
    "its",
    "own",
    "the",
    "kv",
    "cache",
    "travels",
    "between",
    "them",
    "in",
    "blocks",
    "while",
    "a",
    "lease",
    "keeps",
    "every",
    "block",
    "safe",
    "until",
    "read"
  };

  private final long seed;
  private final int maxBytes;
  private final int minFullBlock;

  DemoPrompts(long seed, int maxBytes, int tokensPerBlock) {
    this.seed = seed;
    this.maxBytes = Math.max(maxBytes, tokensPerBlock + 1);
    this.minFullBlock = tokensPerBlock;
  }

  /** Prompt number {@code index}. */
  String prompt(int index) {
    SplittableRandom random = new SplittableRandom(seed * 1_000_003L + index);
    int length =
        random.nextInt(10) == 0
            ? 1 + random.nextInt(minFullBlock - 1 > 0 ? minFullBlock - 1 : 1)
            : minFullBlock + random.nextInt(maxBytes - minFullBlock + 1);
    StringBuilder text = new StringBuilder("#" + index + ":");
    while (text.length() < length) {
      text.append(' ').append(WORDS[random.nextInt(WORDS.length)]);
    }
    text.setLength(length);
    return text.toString();
  }

  /** How many tokens request {@code index} asks for. */
  int maxTokens(int index, int limit) {
    return 1 + new SplittableRandom(seed ^ (index * 0x9E3779B97F4A7C15L)).nextInt(limit);
  }
}
