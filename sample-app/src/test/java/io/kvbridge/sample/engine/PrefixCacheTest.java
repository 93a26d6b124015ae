package io.kvbridge.sample.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.events.BlockHashes;
import io.kvbridge.events.KvEvent;
import io.kvbridge.events.KvEventLog;
import io.kvbridge.layout.KvLayout;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The prefix cache over a pool of 16 blocks of 4 tokens. */
class PrefixCacheTest {

  private static final KvLayout LAYOUT = KvLayout.opaque("test", 4, 2, 16);

  private final BlockPool pool = new BlockPool(List.of(BlockPoolTest.regions(LAYOUT)));

  @Test
  void aPromptFindsTheWholeBlocksItStartsWith() {
    PrefixCache cache = new PrefixCache(pool, 8);
    keep(cache, "abcdefghij");

    PrefixCache.Hit hit = cache.lookup(tokens("abcdefghXYZ"));

    assertThat(hit.tokens()).isEqualTo(8);
    assertThat(hit.blockIds()).hasSize(2);
  }

  @Test
  void aBlockMatchesOnlyAfterTheSamePrefix() {
    PrefixCache cache = new PrefixCache(pool, 8);
    keep(cache, "abcdefgh");

    assertThat(cache.lookup(tokens("XbcdefghZZZ")).isMiss()).isTrue();
    assertThat(cache.lookup(tokens("abcXefgh")).tokens()).isZero();
  }

  @Test
  void aPartlyFilledLastBlockMatchesOnlyAPromptEndingWithIt() {
    PrefixCache cache = new PrefixCache(pool, 8);
    keep(cache, "abcdefghij");

    assertThat(cache.lookup(tokens("abcdefghij")).tokens()).isEqualTo(10);
    assertThat(cache.lookup(tokens("abcdefghijk")).tokens()).isEqualTo(8);
    assertThat(cache.lookup(tokens("abcdefghi")).tokens()).isEqualTo(8);
  }

  @Test
  void theCacheKeepsAtMostItsCapacityAndGivesTheRestBack() {
    PrefixCache cache = new PrefixCache(pool, 3);

    keep(cache, "abcdefghijklmnop");

    assertThat(cache.blocks()).isEqualTo(3);
    assertThat(pool.heldBlocks()).isEqualTo(3);
    assertThat(cache.lookup(tokens("abcdefghijklmnop")).tokens()).isEqualTo(12);
  }

  @Test
  void theLeastRecentlyUsedBlocksGoFirstTheTailOfAPromptBeforeItsStart() {
    PrefixCache cache = new PrefixCache(pool, 4);
    keep(cache, "aaaabbbb");
    keep(cache, "ccccdddd");
    cache.release(cache.lookup(tokens("aaaabbbb")));

    keep(cache, "eeee");

    assertThat(cache.lookup(tokens("aaaabbbb")).tokens()).isEqualTo(8);
    assertThat(cache.lookup(tokens("ccccdddd")).tokens()).isEqualTo(4);
    assertThat(cache.lookup(tokens("eeee")).tokens()).isEqualTo(4);
  }

  @Test
  void aPinnedHitIsNotEvictedUntilItIsReleased() {
    PrefixCache cache = new PrefixCache(pool, 4);
    keep(cache, "aaaabbbb");
    PrefixCache.Hit pinned = cache.lookup(tokens("aaaabbbb"));
    keep(cache, "ccccdddd");

    assertThat(cache.evict(4)).isEqualTo(2);
    assertThat(cache.evictable()).isZero();
    PrefixCache.Hit again = cache.lookup(tokens("aaaabbbb"));
    assertThat(again.blockIds()).isEqualTo(pinned.blockIds());

    cache.release(pinned);
    cache.release(again);
    assertThat(cache.evict(4)).isEqualTo(2);
    assertThat(cache.blocks()).isZero();
    assertThat(pool.heldBlocks()).isZero();
  }

  @Test
  void blocksAlreadyCachedAreFreedNotKeptTwice() {
    PrefixCache cache = new PrefixCache(pool, 8);
    keep(cache, "abcdefgh");

    keep(cache, "abcdefghijkl");

    assertThat(cache.blocks()).isEqualTo(3);
    assertThat(pool.heldBlocks()).isEqualTo(3);
  }

  @Test
  void aCacheOfNoBlocksFreesEveryBlockAndFindsNothing() {
    PrefixCache cache = new PrefixCache(pool, 0);

    keep(cache, "abcdefgh");

    assertThat(pool.heldBlocks()).isZero();
    assertThat(cache.lookup(tokens("abcdefgh")).isMiss()).isTrue();
  }

  @Test
  void fullBlocksKeptAreRecordedStoredAndEvictedOnesRemovedNamedByTheirBlockHashes() {
    BlockHashes hashes = new BlockHashes("test", 4);
    KvEventLog events = new KvEventLog("e", 1, "test", 4, 16);
    PrefixCache cache = new PrefixCache(pool, 3, hashes, events);
    long[] abcdefgh = hashes.of(tokens("abcdefgh"));

    // Two full blocks and a partly filled one: only the full ones are published.
    keep(cache, "abcdefghij");
    cache.flushEvents();
    keep(cache, "abcdefgh");
    cache.flushEvents();
    assertThat(events.snapshot().blockHashes()).containsExactlyInAnyOrder(abcdefgh[0], abcdefgh[1]);
    assertThat(events.sequence()).as("a prefix cached already is not stored again").isEqualTo(1);

    // Over the capacity of three blocks the least recently used go: the partly filled block,
    // which was never published, and efgh, published removed.
    keep(cache, "zzzzyyyy");
    cache.flushEvents();

    long[] zzzzyyyy = hashes.of(tokens("zzzzyyyy"));
    assertThat(events.since(1).orElseThrow().get(0).events())
        .containsExactly(
            new KvEvent.Stored(List.of(zzzzyyyy[0], zzzzyyyy[1])),
            new KvEvent.Removed(List.of(abcdefgh[1])));
    assertThat(events.snapshot().blockHashes())
        .containsExactlyInAnyOrder(abcdefgh[0], zzzzyyyy[0], zzzzyyyy[1]);
  }

  private void keep(PrefixCache cache, String prompt) {
    int[] tokens = tokens(prompt);
    cache.keep(tokens, pool.tryAllocate(pool.blocksFor(tokens.length)).orElseThrow());
  }

  private static int[] tokens(String prompt) {
    return ToyModel.standard().tokenize(prompt);
  }
}
