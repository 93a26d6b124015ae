package io.kvbridge.runtime.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.layout.KvLayout.MemoryOrder;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.KvRegions;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.Transport;
import java.lang.reflect.Proxy;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class RanksTest {

  private static final KvLayout MODEL =
      new KvLayout("m", 2, 3, 2, 6, 0, 6, 8, 16, 64, MemoryOrder.HEAD_MAJOR);

  @Test
  void theRanksAreCompleteOnceEveryRankRegisteredItsMemory() {
    Ranks ranks = new Ranks(transports(2));
    KvMemory first = memory();
    KvMemory second = memory();

    assertThat(ranks.register(1, new KvRegions(MODEL.forRank(1, 2), List.of(second)))).isFalse();
    assertThat(ranks.complete()).isFalse();
    assertThat(ranks.register(0, new KvRegions(MODEL.forRank(0, 2), List.of(first)))).isTrue();

    assertThat(ranks.complete()).isTrue();
    assertThat(ranks.memories())
        .extracting(KvRegions::regions)
        .containsExactly(List.of(first), List.of(second));
  }

  @Test
  void aRankRegistersItsMemoryOnlyOnce() {
    Ranks ranks = new Ranks(transports(2));
    ranks.register(0, new KvRegions(MODEL.forRank(0, 2), List.of(memory())));

    assertThatThrownBy(
            () -> ranks.register(0, new KvRegions(MODEL.forRank(0, 2), List.of(memory()))))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("rank 0 already has a KV cache registered");
  }

  @Test
  void aRankWhoseLayoutDiffersFromAnotherRanksBeyondItsHeadsIsRefused() {
    Ranks ranks = new Ranks(transports(3));
    ranks.register(0, new KvRegions(MODEL.forRank(0, 3), List.of(memory())));
    KvLayout otherBlocks = MODEL.withTokensPerBlock(32).forRank(1, 3);

    assertThatThrownBy(() -> ranks.register(1, new KvRegions(otherBlocks, List.of(memory()))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("does not match another rank's");
    assertThat(ranks.memory(1)).isNull();
  }

  private static List<Transport> transports(int count) {
    return Collections.nCopies(count, unused(Transport.class));
  }

  private static KvMemory memory() {
    return unused(KvMemory.class);
  }

  /** A stand-in the ranks only hold, never call. */
  private static <T> T unused(Class<T> type) {
    Object identity = new Object();
    return type.cast(
        Proxy.newProxyInstance(
            type.getClassLoader(),
            new Class<?>[] {type},
            (proxy, method, args) ->
                switch (method.getName()) {
                  case "equals" -> proxy == args[0];
                  case "hashCode" -> identity.hashCode();
                  case "toString" -> type.getSimpleName() + "@" + identity.hashCode();
                  // What a rank's regions are checked for: large enough, of one kind and device.
                  case "sizeBytes" -> Long.MAX_VALUE;
                  case "kind" -> MemoryKind.DRAM;
                  case "deviceId" -> 0;
                  default -> throw new UnsupportedOperationException(method.getName());
                }));
  }
}
