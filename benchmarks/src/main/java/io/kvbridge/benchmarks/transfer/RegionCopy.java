package io.kvbridge.benchmarks.transfer;

import io.kvbridge.layout.KvLayout;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * What a READ of a {@link PlannedRequest} is weighed against: the same bytes copied by one thread,
 * region to region, in regions of the consumer's shape (every consumer rank's regions of {@link
 * KvLayout#regionBytes()}), each copied whole with one bulk {@link ByteBuffer#put(int, ByteBuffer,
 * int, int)} between heap buffers. The consumer's pools hold exactly the request's blocks, so their
 * regions together hold the bytes the plan moves.
 *
 * <p>Threads: confined to one benchmark thread.
 */
public final class RegionCopy {

  private final List<ByteBuffer> from = new ArrayList<>();
  private final List<ByteBuffer> to = new ArrayList<>();
  private final long bytes;

  /**
   * Allocates both sides' regions and fills the source with random bytes.
   *
   * @throws IllegalArgumentException if the consumer's regions do not hold exactly what the plan
   *     moves
   */
  public RegionCopy(PlannedRequest request) {
    long total = 0;
    int seed = 7;
    for (KvLayout layout : request.consumer()) {
      for (int i = 0; i < layout.regions(); i++) {
        int size = Math.toIntExact(layout.regionBytes());
        ByteBuffer source = ByteBuffer.allocate(size);
        fillRandom(source, seed++);
        from.add(source);
        to.add(ByteBuffer.allocate(size));
        total += size;
      }
    }
    long moved = request.plan().bytes();
    if (total != moved) {
      throw new IllegalArgumentException(
          "the consumer's regions hold " + total + " bytes, the plan moves " + moved);
    }
    this.bytes = total;
  }

  /** The bytes one copy moves: what the plan's READs move. */
  public long bytes() {
    return bytes;
  }

  /** Copies every region once. */
  public void copy() {
    for (int i = 0; i < from.size(); i++) {
      ByteBuffer source = from.get(i);
      to.get(i).put(0, source, 0, source.capacity());
    }
  }

  /** Whether every destination region holds its source's bytes. */
  public boolean copied() {
    for (int i = 0; i < from.size(); i++) {
      if (from.get(i).mismatch(to.get(i)) >= 0) {
        return false;
      }
    }
    return true;
  }

  private static void fillRandom(ByteBuffer buffer, int seed) {
    byte[] chunk = new byte[1 << 20];
    new SplittableRandom(seed).nextBytes(chunk);
    for (int at = 0; at < buffer.capacity(); at += chunk.length) {
      buffer.put(at, chunk, 0, Math.min(chunk.length, buffer.capacity() - at));
    }
  }
}
