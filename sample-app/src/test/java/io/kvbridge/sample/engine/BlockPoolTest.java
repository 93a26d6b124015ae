package io.kvbridge.sample.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.layout.KvLayout;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import org.junit.jupiter.api.Test;

class BlockPoolTest {

  private static final KvLayout LAYOUT = KvLayout.opaque("test", 4, 16, 8);

  private final HeapKvMemory memory = new HeapKvMemory((int) LAYOUT.totalBytes());
  private final BlockPool pool = new BlockPool(memory, LAYOUT);

  @Test
  void allocatesDistinctBlocksAndCountsThemHeld() {
    List<Integer> first = pool.tryAllocate(3).orElseThrow();
    List<Integer> second = pool.tryAllocate(5).orElseThrow();

    List<Integer> all = new ArrayList<>(first);
    all.addAll(second);
    assertThat(new HashSet<>(all)).hasSize(8);
    assertThat(all).allMatch(id -> id >= 0 && id < 8);
    assertThat(pool.heldBlocks()).isEqualTo(8);
    assertThat(pool.freeBlocks()).isZero();
  }

  @Test
  void refusesToAllocateMoreThanIsFree() {
    pool.tryAllocate(6).orElseThrow();

    assertThat(pool.tryAllocate(3)).isEmpty();
    assertThat(pool.heldBlocks()).isEqualTo(6);
  }

  @Test
  void freedBlocksCanBeAllocatedAgain() {
    List<Integer> blocks = pool.tryAllocate(8).orElseThrow();

    pool.free(blocks);

    assertThat(pool.heldBlocks()).isZero();
    assertThat(pool.tryAllocate(8)).isPresent();
  }

  @Test
  void freeingABlockTwiceIsDetected() {
    List<Integer> blocks = pool.tryAllocate(2).orElseThrow();
    pool.free(blocks);

    assertThatThrownBy(() -> pool.free(blocks))
        .isInstanceOf(DoubleFreeException.class)
        .hasMessageContaining("block " + blocks.get(0));
  }

  @Test
  void aFailedFreeFreesNothing() {
    List<Integer> held = pool.tryAllocate(2).orElseThrow();
    List<Integer> notHeld = pool.tryAllocate(1).orElseThrow();
    pool.free(notHeld);

    List<Integer> mixed = List.of(held.get(0), held.get(1), notHeld.get(0));
    assertThatThrownBy(() -> pool.free(mixed)).isInstanceOf(DoubleFreeException.class);
    assertThat(pool.heldBlocks()).isEqualTo(2);
  }

  @Test
  void aBlockNamedTwiceInOneFreeIsDetected() {
    List<Integer> blocks = pool.tryAllocate(1).orElseThrow();

    assertThatThrownBy(() -> pool.free(List.of(blocks.get(0), blocks.get(0))))
        .isInstanceOf(DoubleFreeException.class);
    assertThat(pool.heldBlocks()).isEqualTo(1);
  }

  @Test
  void freeingABlockOutsideThePoolIsDetected() {
    assertThatThrownBy(() -> pool.free(List.of(8)))
        .isInstanceOf(DoubleFreeException.class)
        .hasMessageContaining("outside the pool");
  }

  @Test
  void tokensAreReadBackInTokenOrderAcrossBlocks() {
    List<Integer> blocks = pool.tryAllocate(3).orElseThrow();
    int bytesPerToken = pool.bytesPerToken();
    for (int token = 0; token < 10; token++) {
      byte[] kv = new byte[bytesPerToken];
      java.util.Arrays.fill(kv, (byte) token);
      pool.writeToken(blocks, token, kv);
    }

    byte[] read = pool.readTokens(blocks, 10);

    assertThat(read).hasSize(10 * bytesPerToken);
    for (int token = 0; token < 10; token++) {
      assertThat(read[token * bytesPerToken]).isEqualTo((byte) token);
      assertThat(read[(token + 1) * bytesPerToken - 1]).isEqualTo((byte) token);
    }
  }
}
