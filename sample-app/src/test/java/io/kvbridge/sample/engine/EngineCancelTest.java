package io.kvbridge.sample.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.lease.EndReason;
import io.kvbridge.spi.LoadFailurePolicy;
import io.kvbridge.spi.TransferParams;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Engine#cancel} ends a request wherever it is: waiting, confirming or loading on the decode
 * engine, or finished with its blocks held for a consumer on the prefill engine, and gives every
 * block back.
 */
class EngineCancelTest {

  /** 98 bytes: six full blocks of 16 tokens and a partly filled seventh holding 2. */
  private static final String PROMPT =
      "Disaggregated serving: the prefill node computes the prompt and the decode node continues it.  ...";

  private static final Duration SOON = Duration.ofSeconds(10);

  private EnginePair pair;

  @BeforeEach
  void start() {
    pair = new EnginePair(LoadFailurePolicy.FAIL);
  }

  @AfterEach
  void close() {
    pair.close();
  }

  @Test
  void aRequestWaitingForBlocksIsWithdrawnAndFailsWithTheReason() throws Exception {
    // A held prompt of 250 blocks leaves 6 of the pool's 256: a prompt of 7 blocks must wait.
    prefill("big", "b".repeat(250 * 16));
    CompletableFuture<Generation> waiting =
        pair.prefill.submit(new EngineRequest("w", PROMPT, 1, true, Optional.empty()));
    await().until(() -> pair.prefill.stats().waiting() == 1);

    CancelOutcome outcome = pair.prefill.cancel("w", "client went away").get();

    assertThat(outcome).isEqualTo(CancelOutcome.WITHDRAWN);
    assertThat(waiting)
        .failsWithin(SOON)
        .withThrowableOfType(ExecutionException.class)
        .havingCause()
        .isInstanceOf(RequestCancelledException.class)
        .withMessage("request w was cancelled: client went away");
    assertThat(pair.prefill.stats().waiting()).isZero();
  }

  @Test
  void aLoadInFlightIsCancelledItsBlocksFreedAtOnceAndTheLeaseReleasedOnTheProducer()
      throws Exception {
    TransferParams params = prefill("p", PROMPT);
    pair.faults.stallNextReads(1);
    CompletableFuture<Generation> decoded = decode(params);
    await().until(() -> pair.decode.stats().loading() == 1);

    CancelOutcome outcome = pair.decode.cancel("d", "client went away").get();

    assertThat(outcome).isEqualTo(CancelOutcome.LOAD_CANCELLED);
    assertThat(pair.decode.stats().heldBlocks()).isZero();
    assertThat(pair.decode.stats().loading()).isZero();
    assertThat(decoded)
        .failsWithin(SOON)
        .withThrowableOfType(ExecutionException.class)
        .havingCause()
        .isInstanceOf(RequestCancelledException.class);
    await().until(() -> pair.prefill.stats().heldBlocks() == 0);
    assertThat(leasesEnded()).containsEntry(EndReason.RELEASED, 1L);
  }

  @Test
  void aLoadStillConfirmingIsCancelledAndTheLeaseReleasedOnTheProducer() throws Exception {
    TransferParams params = prefill("p", PROMPT);
    // The confirmation is held on its way to P: the load cannot go past confirming.
    pair.faults.holdNextNotifications(1);
    CompletableFuture<Generation> decoded = decode(params);
    await().until(() -> pair.faults.heldNotifications().size() == 1);

    CancelOutcome outcome = pair.decode.cancel("d", "client went away").get();

    assertThat(outcome).isEqualTo(CancelOutcome.LOAD_CANCELLED);
    assertThat(decoded).failsWithin(SOON);
    assertThat(pair.decode.stats().heldBlocks()).isZero();
    await().until(() -> pair.prefill.stats().heldBlocks() == 0);
    assertThat(leasesEnded()).containsEntry(EndReason.RELEASED, 1L);
  }

  @Test
  void aFinishedRequestHeldForAConsumerHasItsLeaseRevokedAndItsBlocksFreed() throws Exception {
    prefill("p", PROMPT);
    assertThat(pair.prefill.stats().heldBlocks()).isEqualTo(7);

    CancelOutcome outcome = pair.prefill.cancel("p", "client went away").get();

    assertThat(outcome).isEqualTo(CancelOutcome.LEASE_REVOKED);
    await().until(() -> pair.prefill.stats().heldBlocks() == 0);
    assertThat(leasesEnded()).containsEntry(EndReason.REVOKED, 1L);
  }

  @Test
  void aRequestTheEngineDoesNotHoldIsNotFoundAndNothingChanges() throws Exception {
    prefill("p", PROMPT);

    CancelOutcome outcome = pair.prefill.cancel("unknown", "client went away").get();

    assertThat(outcome).isEqualTo(CancelOutcome.NOT_FOUND);
    assertThat(pair.prefill.stats().heldBlocks()).isEqualTo(7);
  }

  @Test
  void aClosedEngineFindsNothingToCancel() throws Exception {
    pair.decode.close();

    assertThat(pair.decode.cancel("d", "client went away").get())
        .isEqualTo(CancelOutcome.NOT_FOUND);
  }

  private Map<EndReason, Long> leasesEnded() {
    return pair.prefill.connector().status().producer().orElseThrow().leasesEnded();
  }

  private TransferParams prefill(String id, String prompt) throws Exception {
    return pair.prefill
        .submit(new EngineRequest(id, prompt, 1, true, Optional.empty()))
        .get()
        .transferParams()
        .orElseThrow();
  }

  private CompletableFuture<Generation> decode(TransferParams params) {
    return pair.decode.submit(new EngineRequest("d", PROMPT, 4, false, Optional.of(params)));
  }
}
