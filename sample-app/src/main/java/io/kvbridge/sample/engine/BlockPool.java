package io.kvbridge.sample.engine;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.transfer.KvRegions;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Optional;

/**
 * The engine's KV cache: a fixed pool of blocks with engine-wide ids, each rank holding its share
 * of every block in {@link KvRegions} of its own (one region, or one per layer or per layer and
 * plane, as its layout places them), laid out as the connector registered them (as in vLLM, every
 * rank has the same block ids). Hands out blocks, takes them back (refusing a block that is not
 * held, so a double free is caught where it happens), and copies KV in and out.
 *
 * <p>A token's KV, as the engine hands it in and gets it back, is the model's head vectors in
 * (layer, plane, head) order, {@link #bytesPerToken()} bytes. Token {@code i} of a request lives in
 * block {@code blockIds[i / tokensPerBlock]}, slot {@code i % tokensPerBlock}; the vector of head
 * {@code h} lies on the rank that holds {@code h}, at {@link KvLayout#offset} of that rank's copy
 * of the block. This is where a consumer's connector writes what it reads from a producer.
 *
 * <p>Threads: allocation and freeing are synchronized and may be called from any thread; copies to
 * the blocks of one request must come from one thread at a time (the engine thread).
 */
public final class BlockPool {

  private final List<KvLayout> ranks;
  private final List<KvRegions> memories;
  private final int tokensPerBlock;
  private final int blockCount;
  private final int bytesPerToken;
  private final int kvHeads;
  private final int planes;
  private final int vectorBytes;
  private final ArrayDeque<Integer> free;
  private final BitSet held;
  private final List<List<List<Piece>>> piecesByRank;

  /**
   * A pool over {@code memories}, one per rank, each rank's regions placed as its layout says.
   *
   * @throws IllegalArgumentException if the ranks do not split the model's heads once
   */
  public BlockPool(List<KvRegions> memories) {
    this.memories = List.copyOf(memories);
    this.ranks = this.memories.stream().map(KvRegions::layout).toList();
    KvLayout.partitionProblem(this.ranks)
        .ifPresent(
            problem -> {
              throw new IllegalArgumentException("KV ranks: " + problem);
            });
    KvLayout first = this.ranks.get(0);
    this.tokensPerBlock = first.tokensPerBlock();
    this.blockCount = first.blockCount();
    this.kvHeads = first.kvHeads();
    this.planes = first.planes();
    this.vectorBytes = first.vectorBytes();
    this.bytesPerToken = first.layers() * planes * kvHeads * vectorBytes;
    this.free = new ArrayDeque<>(blockCount);
    for (int id = 0; id < blockCount; id++) {
      free.addLast(id);
    }
    this.held = new BitSet(blockCount);
    this.piecesByRank = this.ranks.stream().map(this::pieces).toList();
  }

  /** Tokens per block. */
  public int tokensPerBlock() {
    return tokensPerBlock;
  }

  /** Blocks in the pool. */
  public int blockCount() {
    return blockCount;
  }

  /** Bytes of KV per token, over every rank. */
  public int bytesPerToken() {
    return bytesPerToken;
  }

  /** How many blocks {@code tokens} tokens occupy (the last one possibly partial). */
  public int blocksFor(int tokens) {
    return (tokens + tokensPerBlock - 1) / tokensPerBlock;
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
    BitSet seen = new BitSet(blockCount);
    for (int id : blockIds) {
      if (id < 0 || id >= blockCount) {
        throw new DoubleFreeException(
            "block " + id + " is outside the pool of " + blockCount + " blocks");
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

  /**
   * Writes the KV of tokens {@code [from, to)} of a request whose blocks are {@code blockIds}, from
   * {@code kv} (those tokens' KV in token order), onto every rank. Only those tokens' bytes are
   * written, so the other slots of a block may be written by someone else meanwhile.
   */
  public void writeTokens(List<Integer> blockIds, int from, int to, byte[] kv) {
    writeTokens(blockIds, from, to, kv, 0, Integer.MAX_VALUE);
  }

  /**
   * {@link #writeTokens(List, int, int, byte[])} of the layers {@code [fromLayer, toLayer)} alone,
   * as a forward pass writes a prompt's KV layer by layer; {@code kv} holds every layer.
   */
  public void writeTokens(
      List<Integer> blockIds, int from, int to, byte[] kv, int fromLayer, int toLayer) {
    checkRange(blockIds, from, to);
    if (kv.length != (to - from) * bytesPerToken) {
      throw new IllegalArgumentException(
          "KV of "
              + (to - from)
              + " tokens is "
              + (to - from) * bytesPerToken
              + " bytes, got "
              + kv.length);
    }
    if (from == to) {
      return;
    }
    for (int r = 0; r < ranks.size(); r++) {
      KvLayout layout = ranks.get(r);
      Run run = new Run(memories.get(r), layout.blockBytes());
      List<List<Piece>> groups = piecesByRank.get(r);
      for (int b = from / tokensPerBlock; b * tokensPerBlock < to; b++) {
        int blockId = blockIds.get(b);
        int first = Math.max(from, b * tokensPerBlock);
        int end = Math.min(to, (b + 1) * tokensPerBlock);
        int slot = first - b * tokensPerBlock;
        // In memory order, so that neighbours join one write: a head's slots lie together in a
        // head-major slab, a slot's heads in a block-major one.
        for (int g = 0; g < groups.size(); g++) {
          int layer = g / layout.planes();
          if (layer < fromLayer || layer >= toLayer) {
            continue;
          }
          List<Piece> group = groups.get(g);
          // Pieces lie at their offset in the block's image; the slab of (layer, plane) g lies
          // wherever the placement puts it.
          long base =
              layout.slabOffset(blockId, g / layout.planes(), g % layout.planes())
                  - (long) g * layout.slabBytes();
          if (layout.order() == KvLayout.MemoryOrder.HEAD_MAJOR) {
            for (Piece piece : group) {
              for (int token = first; token < end; token++) {
                run.add(
                    base + piece.at(slot + token - first),
                    kv,
                    piece.in(token - from),
                    piece.bytes());
              }
            }
          } else {
            for (int token = first; token < end; token++) {
              for (Piece piece : group) {
                run.add(
                    base + piece.at(slot + token - first),
                    kv,
                    piece.in(token - from),
                    piece.bytes());
              }
            }
          }
        }
        run.flush();
      }
    }
  }

  /**
   * Reads the KV of tokens {@code [0, tokens)} of a request whose blocks are {@code blockIds}, from
   * every rank, in token order.
   */
  public byte[] readTokens(List<Integer> blockIds, int tokens) {
    checkRange(blockIds, 0, tokens);
    byte[] out = new byte[tokens * bytesPerToken];
    for (int r = 0; r < ranks.size(); r++) {
      KvLayout layout = ranks.get(r);
      for (int b = 0; b * tokensPerBlock < tokens; b++) {
        byte[] block = memories.get(r).readBlock(blockIds.get(b));
        int first = b * tokensPerBlock;
        int end = Math.min(tokens, first + tokensPerBlock);
        for (List<Piece> group : piecesByRank.get(r)) {
          for (Piece piece : group) {
            for (int token = first; token < end; token++) {
              System.arraycopy(
                  block, (int) piece.at(token - first), out, piece.in(token), piece.bytes());
            }
          }
        }
      }
    }
    return out;
  }

  /** Copies block {@code from.get(i)} to block {@code to.get(i)} on every rank, whole. */
  public void copyBlocks(List<Integer> from, List<Integer> to) {
    if (from.size() != to.size()) {
      throw new IllegalArgumentException(
          "copying " + from.size() + " blocks into " + to.size() + " blocks");
    }
    for (KvRegions memory : memories) {
      for (int i = 0; i < from.size(); i++) {
        memory.writeBlock(to.get(i), memory.readBlock(from.get(i)));
      }
    }
  }

  /** Where the vector of ({@code layer}, {@code plane}, {@code head}) starts in a token's KV. */
  private int vectorInToken(int layer, int plane, int head) {
    return ((layer * planes + plane) * kvHeads + head) * vectorBytes;
  }

  private void checkRange(List<Integer> blockIds, int from, int to) {
    if (from < 0 || from > to) {
      throw new IllegalArgumentException("token range [" + from + ", " + to + ") is empty");
    }
    if (to > blockIds.size() * tokensPerBlock) {
      throw new IllegalArgumentException(
          "token " + (to - 1) + " lies past the request's " + blockIds.size() + " blocks");
    }
  }

  /**
   * Head vectors of a rank's share of a block that lie next to each other both in memory and in a
   * token's KV (a block-major block's heads of one layer and plane): where slot 0's lie in the
   * block, how far apart consecutive slots' lie, where they lie in a token's KV, and their bytes.
   */
  private record Piece(long offset, int tokenStride, int inToken, int bytes, int bytesPerToken) {

    /** Where the piece of slot {@code slot} lies in the block. */
    long at(int slot) {
      return offset + (long) slot * tokenStride;
    }

    /** Where the piece of the {@code index}-th token lies in KV handed over in token order. */
    int in(int index) {
      return index * bytesPerToken + inToken;
    }

    /** Whether {@code next} continues this piece in memory and in a token's KV alike. */
    boolean continuedBy(Piece next) {
      return next.offset == offset + bytes
          && next.inToken == inToken + bytes
          && next.tokenStride == tokenStride;
    }
  }

  /**
   * The pieces {@code layout}'s rank holds, one list per layer and plane, in the order they lie in
   * its memory.
   */
  private List<List<Piece>> pieces(KvLayout layout) {
    List<List<Piece>> groups = new ArrayList<>();
    int lastHead = layout.headStart() + layout.headCount();
    for (int layer = 0; layer < layout.layers(); layer++) {
      for (int plane = 0; plane < layout.planes(); plane++) {
        List<Piece> group = new ArrayList<>();
        for (int head = layout.headStart(); head < lastHead; head++) {
          long offset = layout.offsetInBlock(layer, plane, head, 0);
          int stride = (int) (layout.offsetInBlock(layer, plane, head, 1) - offset);
          Piece piece =
              new Piece(
                  offset, stride, vectorInToken(layer, plane, head), vectorBytes, bytesPerToken);
          Piece last = group.isEmpty() ? null : group.get(group.size() - 1);
          if (last != null && last.continuedBy(piece)) {
            group.set(
                group.size() - 1,
                new Piece(
                    last.offset, stride, last.inToken, last.bytes + piece.bytes, bytesPerToken));
          } else {
            group.add(piece);
          }
        }
        groups.add(List.copyOf(group));
      }
    }
    return List.copyOf(groups);
  }

  /** Gathers vectors that lie next to each other in a rank's memory into one write. */
  private final class Run {
    private final KvRegions memory;
    private final byte[] buffer;
    private long start;
    private int length;

    Run(KvRegions memory, int capacity) {
      this.memory = memory;
      this.buffer = new byte[capacity];
    }

    void add(long at, byte[] source, int offset, int bytes) {
      if (length > 0 && (at != start + length || length + bytes > buffer.length)) {
        flush();
      }
      if (length == 0) {
        start = at;
      }
      System.arraycopy(source, offset, buffer, length, bytes);
      length += bytes;
    }

    void flush() {
      if (length > 0) {
        memory.write(start, ByteBuffer.wrap(buffer, 0, length));
        length = 0;
      }
    }
  }
}
