package io.kvbridge.sample.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kvbridge.lease.EndReason;
import io.kvbridge.spi.LoadFailurePolicy;
import io.kvbridge.spi.TransferParams;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An engine whose step loop dies (an {@link Error} escapes a step) fails visibly and at once, while
 * a {@link RuntimeException} in one step is survived.
 */
class EngineFailureTest {

  /** 98 bytes: six full blocks of 16 tokens and a partly filled seventh holding 2. */
  private static final String PROMPT =
      "Disaggregated serving: the prefill node computes the prompt and the decode node continues it.  ...";

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
  void aRequestStillLoadingFailsAtOnceWhenTheStepLoopDies() throws Exception {
    pair.faults.stallNextReads(1);
    CompletableFuture<Generation> decoded = decode(prefill());
    await().until(() -> pair.decode.stats().loading() == 1);

    pair.decode.injectIntoNextStep(EngineFailureTest::runOutOfMemory);

    assertThat(decoded)
        .failsWithin(Duration.ofMinutes(1))
        .withThrowableOfType(ExecutionException.class)
        .havingCause()
        .isInstanceOf(EngineFailedException.class)
        .withMessageContaining("engine " + pair.decode.engineId())
        .withMessageContaining("injected: Java heap space")
        .withMessageNotContaining("OutOfMemoryError");
  }

  @Test
  void aDeadEngineRefusesNewRequestsAtOnce() {
    killDecodeEngine();

    CompletableFuture<Generation> refused = pair.decode.submit(EngineRequest.local("r", PROMPT, 2));

    assertThat(refused).isCompletedExceptionally();
    assertThatThrownBy(refused::get).cause().isInstanceOf(EngineFailedException.class);
  }

  @Test
  void aDeadEnginesStateIsFailedWithTheCausesMessage() {
    killDecodeEngine();

    assertThat(pair.decode.state())
        .isInstanceOfSatisfying(
            EngineState.Failed.class,
            failed ->
                assertThat(failed.reason())
                    .contains("injected: Java heap space")
                    .doesNotContain("OutOfMemoryError"));
  }

  @Test
  void aDeadPrefillEngineClosesItsConnectorSoItsLeasesAreRevoked() throws Exception {
    prefill();
    assertThat(pair.prefill.connector().status().producer().orElseThrow().liveLeases())
        .isEqualTo(1);

    pair.prefill.injectIntoNextStep(EngineFailureTest::runOutOfMemory);

    await()
        .untilAsserted(
            () ->
                assertThat(pair.prefill.connector().status().producer().orElseThrow().leasesEnded())
                    .containsEntry(EndReason.REVOKED, 1L));
  }

  @Test
  void aRuntimeExceptionInOneStepIsSurvivedAndTheEngineKeepsServing() throws Exception {
    pair.decode.injectIntoNextStep(
        () -> {
          throw new IllegalStateException("injected step failure");
        });

    Generation served = pair.decode.submit(EngineRequest.local("after", PROMPT, 3)).get();

    assertThat(served.text()).isEqualTo(pair.decode.model().referenceCompletion(PROMPT, 3));
    assertThat(pair.decode.state()).isInstanceOf(EngineState.Running.class);
  }

  private void killDecodeEngine() {
    pair.decode.injectIntoNextStep(EngineFailureTest::runOutOfMemory);
    await().until(() -> pair.decode.state() instanceof EngineState.Failed);
  }

  private static void runOutOfMemory() {
    throw new OutOfMemoryError("injected: Java heap space");
  }

  private TransferParams prefill() throws Exception {
    return pair.prefill
        .submit(new EngineRequest("p", PROMPT, 1, true, Optional.empty()))
        .get()
        .transferParams()
        .orElseThrow();
  }

  private CompletableFuture<Generation> decode(TransferParams params) {
    return pair.decode.submit(new EngineRequest("d", PROMPT, 4, false, Optional.of(params)));
  }
}
