package io.kvbridge.benchmarks.routing;

import java.util.SplittableRandom;

/**
 * The multi-turn workload's text: conversations that each start with one of a few shared system
 * prompts and grow by the previous answer and a new user message each turn, so every turn's prompt
 * begins with the whole of the turn before it. Seeded: the same settings give the same text.
 */
final class Conversations {

  private static final String[] WORDS = {
    "cache", "prefix", "block", "decode", "prefill", "token", "lease", "router", "layer", "tensor",
    "engine", "request", "stream", "model", "answer", "prompt", "memory", "node", "fleet", "event"
  };

  private final long seed;
  private final int systemPrompts;
  private final int systemBytes;
  private final int userBytes;

  Conversations(long seed, int systemPrompts, int systemBytes, int userBytes) {
    this.seed = seed;
    this.systemPrompts = systemPrompts;
    this.systemBytes = systemBytes;
    this.userBytes = userBytes;
  }

  /** The system prompt conversation {@code conversation} starts with. */
  String system(int conversation) {
    int which = conversation % systemPrompts;
    return text("System prompt " + which + ": ", systemBytes, seed * 31 + which);
  }

  /** The user's message of {@code turn} (from 1) of {@code conversation}. */
  String user(int conversation, int turn) {
    return text(
        "\nUser " + conversation + ", turn " + turn + ": ",
        userBytes,
        seed * 1_000_003L + conversation * 101L + turn);
  }

  /** A prompt of {@code bytes} bytes no other call returns: filler for the caches. */
  String filler(int index, int bytes) {
    return text("Filler " + index + " of a cold cache: ", bytes, ~seed * 7_919L + index);
  }

  private static String text(String start, int bytes, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    StringBuilder text = new StringBuilder(start);
    while (text.length() < bytes) {
      text.append(WORDS[random.nextInt(WORDS.length)]).append(' ');
    }
    return text.substring(0, bytes);
  }
}
