package io.kvbridge.sample.demo;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The demo's prompts, repeatable for a seed: conversations of a few turns, as chat traffic is. A
 * conversation opens with a prompt of varied length (about one in ten shorter than a block); each
 * later turn sends the previous prompt with a new message appended, or now and then the previous
 * prompt again (a regenerated answer). So later turns start with a prompt the decode node has
 * served, which its prefix cache may still hold; a regenerated one it may hold whole.
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

  /**
   * Prompts of at most {@code maxBytes} bytes; {@code tokensPerBlock} is the smaller block size of
   * the engines, so a short prompt is shorter than any block.
   */
  DemoPrompts(long seed, int maxBytes, int tokensPerBlock) {
    this.seed = seed;
    this.maxBytes = Math.max(maxBytes, tokensPerBlock + 1);
    this.minFullBlock = tokensPerBlock;
  }

  /** The prompts of conversation {@code index}, one per turn, {@code turns} of them. */
  List<String> conversation(int index, int turns) {
    SplittableRandom random = new SplittableRandom(seed * 1_000_003L + index);
    List<String> prompts = new ArrayList<>(turns);
    int opening =
        random.nextInt(10) == 0
            ? 1 + random.nextInt(Math.max(1, minFullBlock - 1))
            : minFullBlock + random.nextInt(Math.max(1, maxBytes / 2 - minFullBlock + 1));
    String prompt = words(new StringBuilder("#" + index + ":"), opening, random);
    prompts.add(prompt);
    for (int turn = 1; turn < turns; turn++) {
      if (random.nextInt(4) != 0 && prompt.length() < maxBytes) {
        int added = minFullBlock + random.nextInt(Math.max(1, maxBytes / 4));
        prompt =
            words(
                new StringBuilder(prompt).append(" | turn ").append(turn).append(':'),
                Math.min(maxBytes, prompt.length() + added),
                random);
      }
      prompts.add(prompt);
    }
    return List.copyOf(prompts);
  }

  /** How many tokens request {@code index} asks for. */
  int maxTokens(int index, int limit) {
    return 1 + new SplittableRandom(seed ^ (index * 0x9E3779B97F4A7C15L)).nextInt(limit);
  }

  /** {@code text} filled with words up to exactly {@code length} bytes (or cut to it). */
  private static String words(StringBuilder text, int length, SplittableRandom random) {
    while (text.length() < length) {
      text.append(' ').append(WORDS[random.nextInt(WORDS.length)]);
    }
    text.setLength(length);
    return text.toString();
  }
}
