package io.kvbridge.sample.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.lease.EndReason;
import io.kvbridge.sample.engine.Generation.KvSource;
import io.kvbridge.spi.LoadFailurePolicy;
import io.kvbridge.spi.TransferParams;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A decode engine with a prefix cache loads only what a prompt does not start with: from the cached
 * prefix rounded down to whole blocks of both engines, and nothing at all (the lease released) when
 * the cache holds every token.
 */
class PrefixCacheTransferTest {

  /** 98 bytes. */
  private static final String PROMPT =
      "Disaggregated serving: the prefill node computes the prompt and the decode node continues it.  ...";

  private static final String NEXT_TURN =
      " | Then the user asks how the prefix cache saves the decode node a transfer.";

  private EnginePair pair;
  private int requests;

  @AfterEach
  void close() {
    if (pair != null) {
      pair.close();
    }
  }

  @Test
  void aPromptTheCacheHoldsNothingOfIsLoadedWhole() throws Exception {
    pair = pair(8, 16, 64);

    Generation decoded = serve(PROMPT, 5);

    assertThat(decoded.kvSource()).isEqualTo(KvSource.LOADED);
    assertThat(decoded.cachedTokens()).isZero();
    assertThat(decoded.loadedTokens()).isEqualTo(PROMPT.length());
    assertThat(decoded.text()).isEqualTo(reference(PROMPT, 5));
  }

  static Stream<Arguments> partialHits() {
    // (P block, D block, first prompt's length, tokens the second takes from the cache)
    return Stream.of(
        Arguments.of(8, 16, 98, 96),
        Arguments.of(16, 32, 98, 96),
        Arguments.of(32, 16, 90, 64),
        Arguments.of(8, 8, 41, 40));
  }

  @ParameterizedTest(name = "P x {0}, D x {1}: {2} tokens served, then {3} from the cache")
  @MethodSource("partialHits")
  void aPromptStartingWithAServedOneLoadsFromTheCachedPrefixRoundedToBothBlockSizes(
      int prefillBlock, int decodeBlock, int firstLength, int fromCache) throws Exception {
    pair = pair(prefillBlock, decodeBlock, 64);
    String first = PROMPT.substring(0, firstLength);
    String second = first + NEXT_TURN;
    serve(first, 3);
    long bytesBefore = bytesRead();

    Generation decoded = serve(second, 7);

    assertThat(decoded.kvSource()).isEqualTo(KvSource.LOADED);
    assertThat(decoded.cachedTokens()).isEqualTo(fromCache);
    assertThat(decoded.loadedTokens()).isEqualTo(second.length() - fromCache);
    assertThat(decoded.text()).isEqualTo(reference(second, 7));
    assertThat(bytesRead() - bytesBefore)
        .isEqualTo((long) (second.length() - fromCache) * ToyModel.BYTES_PER_TOKEN);
    await().until(() -> pair.prefill.stats().heldBlocks() == 0);
    assertThat(leasesEnded(EndReason.READ)).isEqualTo(2);
  }

  @ParameterizedTest(name = "{0} tokens")
  @ValueSource(ints = {98, 96})
  void aPromptTheCacheHoldsWholeReadsNothingAndReleasesTheLease(int length) throws Exception {
    pair = pair(8, 16, 64);
    String prompt = PROMPT.substring(0, length);
    serve(prompt, 2);
    long bytesBefore = bytesRead();

    Generation again = serve(prompt, 9);

    assertThat(again.kvSource()).isEqualTo(KvSource.CACHED);
    assertThat(again.cachedTokens()).isEqualTo(length);
    assertThat(again.loadedTokens()).isZero();
    assertThat(again.computedTokens()).isZero();
    assertThat(again.text()).isEqualTo(reference(prompt, 9));
    assertThat(bytesRead()).isEqualTo(bytesBefore);
    await().until(() -> leasesEnded(EndReason.RELEASED) == 1);
    await().until(() -> pair.prefill.stats().heldBlocks() == 0);
    assertThat(pair.decode.stats().heldBlocks()).isZero();
    assertThat(pair.decode.stats().cachedTokens()).isEqualTo(length);
  }

  @Test
  void withTheCacheOffARepeatedPromptIsLoadedAgain() throws Exception {
    pair = pair(8, 16, 0);
    serve(PROMPT, 2);

    Generation again = serve(PROMPT, 2);

    assertThat(again.kvSource()).isEqualTo(KvSource.LOADED);
    assertThat(again.loadedTokens()).isEqualTo(PROMPT.length());
    assertThat(pair.decode.stats().prefixCacheBlocks()).isZero();
  }

  @Test
  void thePrefillEngineReusesWhatItsLeasesHeldOnceTheyEnd() throws Exception {
    pair =
        new EnginePair(
            EnginePair.shape(2, 8, 64), EnginePair.shape(1, 16, 0), LoadFailurePolicy.FAIL);
    serve(PROMPT, 2);
    await().until(() -> pair.prefill.stats().prefixCacheBlocks() > 0);

    Generation decoded = serve(PROMPT + NEXT_TURN, 4);

    assertThat(pair.prefill.stats().cachedTokens()).isEqualTo(96);
    assertThat(decoded.text()).isEqualTo(reference(PROMPT + NEXT_TURN, 4));
  }

  @Test
  void theCachesBlocksAreGivenBackWhenRequestsNeedThem() throws Exception {
    pair = pair(16, 16, EnginePair.BLOCKS);
    serve(PROMPT, 2);
    assertThat(pair.decode.stats().prefixCacheBlocks()).isEqualTo(7);
    // Needs 252 of the 249 free blocks: three of the cache's must go.
    String large = "x".repeat(16 * (EnginePair.BLOCKS - 4));

    Generation served = serve(large, 2);

    assertThat(served.text()).isEqualTo(reference(large, 2));
    assertThat(pair.decode.stats().prefixCacheBlocks()).isEqualTo(EnginePair.BLOCKS);
    assertThat(pair.decode.stats().heldBlocks()).isZero();
  }

  private static EnginePair pair(int prefillBlock, int decodeBlock, int decodeCache) {
    return new EnginePair(
        EnginePair.shape(2, prefillBlock, 0),
        EnginePair.shape(1, decodeBlock, decodeCache),
        LoadFailurePolicy.FAIL);
  }

  /** What the router does: prefill on P under a lease, then decode on D from P's parameters. */
  private Generation serve(String prompt, int maxTokens) throws Exception {
    int n = ++requests;
    TransferParams params =
        pair.prefill
            .submit(new EngineRequest("p-" + n, prompt, 1, true, Optional.empty()))
            .get()
            .transferParams()
            .orElseThrow();
    return pair.decode
        .submit(new EngineRequest("d-" + n, prompt, maxTokens, false, Optional.of(params)))
        .get();
  }

  private long bytesRead() {
    return pair.decode.connector().status().consumer().orElseThrow().bytesRead();
  }

  private long leasesEnded(EndReason reason) {
    return pair.prefill
        .connector()
        .status()
        .producer()
        .orElseThrow()
        .leasesEnded()
        .getOrDefault(reason, 0L);
  }

  private static String reference(String prompt, int maxTokens) {
    return ToyModel.standard().referenceCompletion(prompt, maxTokens);
  }
}
