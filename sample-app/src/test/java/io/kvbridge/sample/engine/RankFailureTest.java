package io.kvbridge.sample.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.sample.engine.EnginePair.FaultScope;
import io.kvbridge.sample.engine.Generation.KvSource;
import io.kvbridge.spi.LoadFailurePolicy;
import io.kvbridge.spi.TransferParams;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * One rank of a tensor-parallel decode engine failing its read fails the whole load: the request
 * ends with the reason under policy {@code fail}, and is computed here, still the colocated
 * reference, under {@code recompute}.
 */
class RankFailureTest {

  /** 98 bytes. */
  private static final String PROMPT =
      "Disaggregated serving: the prefill node computes the prompt and the decode node continues it.  ...";

  private static final String REASON = "rank 1's link went down";

  private EnginePair pair;
  private int requests;

  @AfterEach
  void close() {
    if (pair != null) {
      pair.close();
    }
  }

  @Test
  void underPolicyFailTheRequestEndsWithTheFailingRanksReason() throws Exception {
    pair = pair(LoadFailurePolicy.FAIL, 0);
    pair.faults.failNextReads(1, REASON);

    CompletableFuture<Generation> decoded = serve(PROMPT, 4);

    assertThat(decoded)
        .failsWithin(Duration.ofMinutes(1))
        .withThrowableOfType(ExecutionException.class)
        .havingCause()
        .isInstanceOf(KvLoadFailedException.class)
        .withMessageContaining(REASON);
    await().until(() -> pair.decode.stats().heldBlocks() == 0);
    assertThat(pair.prefill.connector().status().producer().orElseThrow().liveLeases())
        .isEqualTo(1);
  }

  @Test
  void underPolicyRecomputeTheRequestIsComputedHereAndMatchesTheReference() throws Exception {
    pair = pair(LoadFailurePolicy.RECOMPUTE, 0);
    pair.faults.failNextReads(1, REASON);

    Generation decoded = serve(PROMPT, 8).get();

    assertThat(decoded.kvSource()).isEqualTo(KvSource.RECOMPUTED);
    assertThat(decoded.computedTokens()).isEqualTo(PROMPT.length());
    assertThat(decoded.text()).isEqualTo(ToyModel.standard().referenceCompletion(PROMPT, 8));
    await().until(() -> pair.decode.stats().heldBlocks() == 0);
  }

  @Test
  void underPolicyRecomputeTheCachedPrefixStandsAndOnlyTheRestIsComputed() throws Exception {
    pair = pair(LoadFailurePolicy.RECOMPUTE, 64);
    serve(PROMPT, 2).get();
    String next = PROMPT + " | and a second turn that the decode node must load or compute.";
    pair.faults.failNextReads(1, REASON);

    Generation decoded = serve(next, 8).get();

    assertThat(decoded.kvSource()).isEqualTo(KvSource.RECOMPUTED);
    assertThat(decoded.cachedTokens()).isEqualTo(96);
    assertThat(decoded.computedTokens()).isEqualTo(next.length() - 96);
    assertThat(decoded.text()).isEqualTo(ToyModel.standard().referenceCompletion(next, 8));
  }

  /** P with two ranks of 8-token blocks; D with two ranks of 16-token blocks, rank 1 faulted. */
  private static EnginePair pair(LoadFailurePolicy policy, int decodeCache) {
    return new EnginePair(
        EnginePair.shape(2, 8, 0),
        EnginePair.shape(2, 16, decodeCache),
        policy,
        Duration.ofMinutes(1),
        FaultScope.DECODE_RANK_1);
  }

  private CompletableFuture<Generation> serve(String prompt, int maxTokens) throws Exception {
    int n = ++requests;
    TransferParams params =
        pair.prefill
            .submit(new EngineRequest("p-" + n, prompt, 1, true, Optional.empty()))
            .get()
            .transferParams()
            .orElseThrow();
    return pair.decode.submit(
        new EngineRequest("d-" + n, prompt, maxTokens, false, Optional.of(params)));
  }
}
