package io.kvbridge.sample.engine;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.transfer.KvMemory;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The engine's KV cache: a fixed pool of blocks laid out back to back in one {@link KvMemory}, as
 * the connector registered it. Hands out blocks, takes them back (refusing a block that is not
 * held, so a double free is caught where it happens), and copies per-token KV in and out.
 *
 * <p>Token {@code i} of a request lives in block {@code blockIds[i / tokensPerBlock]} at byte
 * {@code (i % tokensPerBlock) * bytesPerToken()}; this is the layout a consumer relies on when it
 * reads a producer's blocks.
 *
 * <p>Threads: allocation and freeing are synchronized and may be called from any thread; copies to
 * the blocks of one request must come from one thread at a time (the engine thread).
 */
public final class BlockPool {

  private final KvMemory memory;
  private final KvLayout layout;
  private final int bytesPerToken;
  private final ArrayDeque<Integer> free;
  private final BitSet held;

  /**
   * A pool over {@code memory}, which must hold at least {@code layout.totalBytes()}.
   *
   * @throws IllegalArgumentException if the memory is too small or a block does not hold a whole
   *     number of tokens
   */
  public BlockPool(KvMemory memory, KvLayout layout) {
    this.memory = Objects.requireNonNull(memory, "memory");
    this.layout = Objects.requireNonNull(layout, "layout");
    if (memory.sizeBytes() < layout.totalBytes()) {
      throw new IllegalArgumentException(
          "KV memory of "
              + memory.sizeBytes()
              + " bytes cannot hold "
              + layout.blockCount()
              + " blocks of "
              + layout.blockBytes()
              + " bytes");
    }
    this.bytesPerToken = layout.blockBytes() / layout.tokensPerBlock();
    this.free = new ArrayDeque<>(layout.blockCount());
    for (int id = 0; id < layout.blockCount(); id++) {
      free.addLast(id);
    }
    this.held = new BitSet(layout.blockCount());
  }

  /** The layout of this pool. */
  public KvLayout layout() {
    return layout;
  }

  /** Bytes of KV per token. */
  public int bytesPerToken() {
    return bytesPerToken;
  }

  /** How many blocks {@code tokens} tokens occupy (the last one possibly partial). */
  public int blocksFor(int tokens) {
    return (tokens + layout.tokensPerBlock() - 1) / layout.tokensPerBlock();
  }

  /** Takes {@code count} blocks, or nothing if fewer are free. */
  public synchronized Optional<List<Integer>> tryAllocate(int count) {
    if (count < 0) {
      throw new IllegalArgumentException("cannot allocate " + count + " blocks");
    }
    if (count > free.size()) {
      return Optional.empty();
    }
    List<Integer> ids = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      int id = free.pollFirst();
      held.set(id);
      ids.add(id);
    }
    return Optional.of(List.copyOf(ids));
  }

  /**
   * Gives {@code blockIds} back. Either every block is freed or none is.
   *
   * @throws DoubleFreeException if a block is not held (already freed, never allocated, named twice
   *     in the list, or outside the pool)
   */
  public synchronized void free(List<Integer> blockIds) {
    BitSet seen = new BitSet(layout.blockCount());
    for (int id : blockIds) {
      if (id < 0 || id >= layout.blockCount()) {
        throw new DoubleFreeException(
            "block " + id + " is outside the pool of " + layout.blockCount() + " blocks");
      }
      if (!held.get(id) || seen.get(id)) {
        throw new DoubleFreeException(
            "block " + id + " is freed but not held; the blocks " + blockIds + " were not freed");
      }
      seen.set(id);
    }
    for (int id : blockIds) {
      held.clear(id);
      free.addLast(id);
    }
  }

  /** Blocks allocated and not yet freed. */
  public synchronized int heldBlocks() {
    return held.cardinality();
  }

  /** Blocks available to allocate. */
  public synchronized int freeBlocks() {
    return free.size();
  }

  /** Writes the KV of token {@code token} of a request whose blocks are {@code blockIds}. */
  public void writeToken(List<Integer> blockIds, int token, byte[] kv) {
    if (kv.length != bytesPerToken) {
      throw new IllegalArgumentException(
          "token KV is " + kv.length + " bytes, the pool stores " + bytesPerToken);
    }
    memory.write(offsetOf(blockIds, token), ByteBuffer.wrap(kv));
  }

  /** Reads the KV of tokens {@code [0, tokens)} of a request whose blocks are {@code blockIds}. */
  public byte[] readTokens(List<Integer> blockIds, int tokens) {
    if (tokens > blockIds.size() * layout.tokensPerBlock()) {
      throw new IllegalArgumentException(
          tokens + " tokens do not fit in " + blockIds.size() + " blocks");
    }
    byte[] out = new byte[tokens * bytesPerToken];
    int tokensPerBlock = layout.tokensPerBlock();
    for (int b = 0; b * tokensPerBlock < tokens; b++) {
      int inBlock = Math.min(tokensPerBlock, tokens - b * tokensPerBlock);
      memory.read(
          (long) blockIds.get(b) * layout.blockBytes(),
          ByteBuffer.wrap(out, b * tokensPerBlock * bytesPerToken, inBlock * bytesPerToken));
    }
    return out;
  }

  private long offsetOf(List<Integer> blockIds, int token) {
    int block = token / layout.tokensPerBlock();
    if (block >= blockIds.size()) {
      throw new IllegalArgumentException(
          "token " + token + " lies past the request's " + blockIds.size() + " blocks");
    }
    return (long) blockIds.get(block) * layout.blockBytes()
        + (long) (token % layout.tokensPerBlock()) * bytesPerToken;
  }
}
