package io.kvbridge.sample.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kvbridge.lease.EndReason;
import io.kvbridge.sample.engine.Generation.KvSource;
import io.kvbridge.spi.InvalidTransferParamsException;
import io.kvbridge.spi.LoadFailurePolicy;
import io.kvbridge.spi.TransferParams;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A prefill engine and a decode engine moving KV through the fake connector, end to end. */
class EngineTransferTest {

  /** 98 bytes: six full blocks of 16 tokens and a partly filled seventh holding 2. */
  private static final String PROMPT =
      "Disaggregated serving: the prefill node computes the prompt and the decode node continues it.  ...";

  private EnginePair pair;

  @AfterEach
  void close() {
    if (pair != null) {
      pair.close();
    }
  }

  @Test
  void decodingFromTransferredKvGivesTheColocatedReference() throws Exception {
    pair = new EnginePair(LoadFailurePolicy.FAIL);
    TransferParams params = prefill(PROMPT).transferParams().orElseThrow();

    Generation decoded = decode(PROMPT, 12, params).get();

    assertThat(decoded.text()).isEqualTo(pair.decode.model().referenceCompletion(PROMPT, 12));
    assertThat(decoded.kvSource()).isEqualTo(KvSource.LOADED);
    assertThat(decoded.loadedTokens()).isEqualTo(PROMPT.length());
  }

  @Test
  void theFirstTokenOfThePrefillNodeStartsTheDecodedCompletion() throws Exception {
    pair = new EnginePair(LoadFailurePolicy.FAIL);
    Generation first = prefill(PROMPT);

    Generation decoded = decode(PROMPT, 5, first.transferParams().orElseThrow()).get();

    assertThat(decoded.words().get(0)).isEqualTo(first.words().get(0));
  }

  @Test
  void aReadLeaseGivesEveryPrefillBlockBack() throws Exception {
    pair = new EnginePair(LoadFailurePolicy.FAIL);
    TransferParams params = prefill(PROMPT).transferParams().orElseThrow();
    assertThat(pair.prefill.stats().heldBlocks()).isEqualTo(7);

    decode(PROMPT, 3, params).get();

    await().until(() -> pair.prefill.stats().heldBlocks() == 0);
    assertThat(pair.prefill.connector().status().producer().orElseThrow().leasesEnded())
        .containsEntry(EndReason.READ, 1L);
    assertThat(pair.decode.stats().heldBlocks()).isZero();
    assertThat(pair.decode.stats().loadedBlocks()).isEqualTo(7);
  }

  @Test
  void everyBlockOfThePromptIsLeasedThePartlyFilledTailIncluded() throws Exception {
    pair = new EnginePair(LoadFailurePolicy.FAIL);

    TransferParams params = prefill(PROMPT).transferParams().orElseThrow();

    assertThat(params.blockIds()).hasSize(7);
    assertThat(params.tokens()).isEqualTo(PROMPT.length());
  }

  @Test
  void aPromptShorterThanABlockIsLoadedFromItsOneBlock() throws Exception {
    pair = new EnginePair(LoadFailurePolicy.FAIL);
    TransferParams params = prefill("too short").transferParams().orElseThrow();

    Generation decoded = decode("too short", 4, params).get();

    assertThat(params.blockIds()).hasSize(1);
    assertThat(decoded.kvSource()).isEqualTo(KvSource.LOADED);
    assertThat(decoded.loadedTokens()).isEqualTo("too short".length());
    assertThat(decoded.text()).isEqualTo(pair.decode.model().referenceCompletion("too short", 4));
    await().until(() -> pair.prefill.stats().heldBlocks() == 0);
  }

  @Test
  void anUnreadLeaseExpiresAndAnIdleEngineFreesItsBlocks() throws Exception {
    pair = new EnginePair(LoadFailurePolicy.FAIL);
    prefill(PROMPT);
    assertThat(pair.prefill.stats().heldBlocks()).isEqualTo(7);

    pair.clock.advance(EnginePair.LEASE.plusNanos(1));

    await().until(() -> pair.prefill.stats().heldBlocks() == 0);
    assertThat(pair.prefill.connector().status().producer().orElseThrow().leasesEnded())
        .containsEntry(EndReason.EXPIRED, 1L);
  }

  @Test
  void underPolicyFailAFailedReadEndsTheRequestWithTheReason() throws Exception {
    pair = new EnginePair(LoadFailurePolicy.FAIL);
    TransferParams params = prefill(PROMPT).transferParams().orElseThrow();
    pair.faults.failNextReads(1, "injected read failure");

    CompletableFuture<Generation> decoded = decode(PROMPT, 4, params);

    assertThatThrownBy(decoded::get)
        .isInstanceOf(ExecutionException.class)
        .cause()
        .isInstanceOf(KvLoadFailedException.class)
        .hasMessageContaining("injected read failure");
    await().until(() -> pair.decode.stats().heldBlocks() == 0);
  }

  @Test
  void underPolicyRecomputeAFailedReadIsPrefilledLocallyAndMatchesTheReference() throws Exception {
    pair = new EnginePair(LoadFailurePolicy.RECOMPUTE);
    TransferParams params = prefill(PROMPT).transferParams().orElseThrow();
    pair.faults.failNextReads(1, "injected read failure");

    Generation decoded = decode(PROMPT, 9, params).get();

    assertThat(decoded.kvSource()).isEqualTo(KvSource.RECOMPUTED);
    assertThat(decoded.text()).isEqualTo(pair.decode.model().referenceCompletion(PROMPT, 9));
    await().until(() -> pair.decode.stats().heldBlocks() == 0);
  }

  @Test
  void aLeaseEndingInsideTheSafetyMarginIsNotRead() throws Exception {
    // No renewal can move the lease past its maximum lifetime, here one lease long: the
    // confirmation before the read finds it ending inside the margin.
    pair = new EnginePair(LoadFailurePolicy.FAIL, EnginePair.LEASE);
    TransferParams params = prefill(PROMPT).transferParams().orElseThrow();
    pair.clock.advance(EnginePair.LEASE.minus(EnginePair.SAFETY_MARGIN).plusMillis(1));

    CompletableFuture<Generation> decoded = decode(PROMPT, 4, params);

    assertThatThrownBy(decoded::get)
        .cause()
        .isInstanceOf(KvLoadFailedException.class)
        .hasMessageContaining("safety margin");
    assertThat(pair.decode.stats().loadedBlocks()).isZero();
  }

  @Test
  void paramsClaimingMoreTokensThanThePromptAreRefusedAndNothingIsHeld() throws Exception {
    pair = new EnginePair(LoadFailurePolicy.FAIL);
    TransferParams params = prefill(PROMPT).transferParams().orElseThrow();

    CompletableFuture<Generation> decoded = decode("a shorter prompt", 4, params);

    assertThatThrownBy(decoded::get)
        .cause()
        .isInstanceOf(InvalidTransferParamsException.class)
        .hasMessageContaining("exceed the prompt");
    assertThat(pair.decode.stats().heldBlocks()).isZero();
  }

  @Test
  void anEmptyPromptIsRefused() {
    pair = new EnginePair(LoadFailurePolicy.FAIL);

    assertThatThrownBy(() -> pair.prefill.submit(EngineRequest.local("r", "", 1)).get())
        .cause()
        .isInstanceOf(InvalidPromptException.class);
  }

  @Test
  void aPromptLargerThanThePoolIsRefusedWithTheLimit() {
    pair = new EnginePair(LoadFailurePolicy.FAIL);
    String huge = "x".repeat(EnginePair.BLOCKS * 16 + 1);

    assertThatThrownBy(() -> pair.prefill.submit(EngineRequest.local("r", huge, 1)).get())
        .cause()
        .isInstanceOf(InvalidPromptException.class)
        .hasMessageContaining("kvbridge.sample.engine.block-count");
  }

  @Test
  void aRequestBeyondTheContextIsRefusedAtSubmitNamingMaxTokens() {
    pair = new EnginePair(LoadFailurePolicy.FAIL);

    CompletableFuture<Generation> refused =
        pair.prefill.submit(EngineRequest.local("r", PROMPT, Integer.MAX_VALUE));

    assertThat(refused).isCompletedExceptionally();
    assertThatThrownBy(refused::get)
        .cause()
        .isInstanceOf(InvalidPromptException.class)
        .hasMessageContaining(ContextWindow.PROPERTY)
        .extracting(e -> ((InvalidPromptException) e).param())
        .isEqualTo("max_tokens");
  }

  @Test
  void closingTheEngineFailsRequestsStillLoading() {
    pair = new EnginePair(LoadFailurePolicy.FAIL);
    pair.faults.stallNextReads(1);
    TransferParams params = prefillUnchecked();
    CompletableFuture<Generation> decoded = decode(PROMPT, 4, params);
    await().until(() -> pair.decode.stats().loading() == 1);

    pair.decode.close();

    assertThatThrownBy(decoded::get).cause().isInstanceOf(EngineClosedException.class);
  }

  private TransferParams prefillUnchecked() {
    try {
      return prefill(PROMPT).transferParams().orElseThrow();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private Generation prefill(String prompt) throws Exception {
    return pair.prefill
        .submit(new EngineRequest("p-" + prompt.length(), prompt, 1, true, Optional.empty()))
        .get();
  }

  private CompletableFuture<Generation> decode(
      String prompt, int maxTokens, TransferParams params) {
    return pair.decode.submit(
        new EngineRequest("d-" + prompt.length(), prompt, maxTokens, false, Optional.of(params)));
  }
}
