package io.kvbridge.tck.schedule;

/** Which of a prompt's tokens a block holds. */
final class KvBlocks {

  private KvBlocks() {}

  /** The tokens of block {@code index} of a prompt of {@code tokens} in blocks of {@code size}. */
  static int usedTokens(int index, int size, int tokens) {
    return Math.max(0, Math.min(size, tokens - index * size));
  }
}
