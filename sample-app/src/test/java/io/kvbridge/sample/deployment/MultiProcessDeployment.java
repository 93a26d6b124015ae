package io.kvbridge.sample.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.sample.engine.ToyModel;
import io.kvbridge.sample.router.DroppedAfterPrefillException;
import io.kvbridge.spi.ConnectorSettings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The profiles {@code prefill}, {@code decode} and {@code router} as a real multi-process
 * deployment: P and D run as child JVMs that handshake over TCP and move KV through a connector
 * that spans processes (chosen by the subclass); the router runs in this JVM and drops a share of
 * requests after prefill, whose leases must then expire on P.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class MultiProcessDeployment {

  private static final int REQUESTS = 12;

  private ChildNode prefill;
  private ChildNode decode;
  private InProcessRouter router;
  private final List<Answer> answers = new ArrayList<>();

  /** The connector settings both nodes get, as command-line arguments. */
  abstract List<String> connectorArguments(Path work) throws IOException;

  /** The engines' KV shape, as command-line arguments both nodes get: the toy model's. */
  List<String> modelArguments() {
    return List.of();
  }

  /** Whether the nodes stream every request: the prefill node answers as it grants the lease. */
  boolean streamed() {
    return false;
  }

  /** What the colocated model computes: the toy model at the KV size of the nodes' model. */
  ToyModel reference() {
    return ToyModel.standard();
  }

  @BeforeAll
  void deployAndSendTraffic(@TempDir Path work) throws Exception {
    List<String> connector = new ArrayList<>(connectorArguments(work));
    connector.addAll(modelArguments());
    prefill = new ChildNode("prefill", ChildNode.freePort(), work);
    decode = new ChildNode("decode", ChildNode.freePort(), work);
    prefill.start(connector);
    decode.start(connector);
    router =
        InProcessRouter.start(prefill, decode, "--kvbridge.sample.router.drop-after-prefill=0.25");
    prefill.awaitHealthy();
    decode.awaitHealthy();
    // The router probed the nodes while they started: it sends requests once it sees them UP.
    router.awaitSeesEveryNodeHealthy();
    for (int i = 0; i < REQUESTS; i++) {
      String prompt = ("request " + i + " crosses a process boundary; ").repeat(1 + i % 4);
      answers.add(new Answer(prompt, 6, router.complete(prompt, 6)));
    }
  }

  @AfterAll
  void stop() throws InterruptedException {
    if (router != null) {
      router.close();
    }
    for (ChildNode node : new ChildNode[] {prefill, decode}) {
      if (node != null) {
        node.close();
      }
    }
  }

  @Test
  void everyServedCompletionMatchesTheColocatedReference() {
    ToyModel reference = reference();
    List<Answer> served = answers.stream().filter(a -> a.status() == 200).toList();

    assertThat(served).hasSize(REQUESTS - dropped());
    for (Answer a : served) {
      assertThat(InProcessRouter.text(a.body()))
          .isEqualTo(reference.referenceCompletion(a.prompt(), a.maxTokens()));
      assertThat(a.body().get("kvbridge")).asString().contains("kv_source=LOADED");
    }
  }

  @Test
  void everyPrefillWasStreamedExactlyWhenTheNodesStreamIt() {
    Map<String, Object> stats = router.stats();
    // Nodes that stream every prompt stream them all; others those of at least the default
    // kvbridge.streaming.min-tokens (the toy model's tokens are the prompt's UTF-8 bytes).
    long longEnough =
        answers.stream()
            .filter(
                a ->
                    a.prompt().getBytes(StandardCharsets.UTF_8).length
                        >= ConnectorSettings.DEFAULT_STREAMING_MIN_TOKENS)
            .count();

    assertThat(longEnough).as("prompts on either side of the default").isBetween(1L, REQUESTS - 1L);
    assertThat(((Number) stats.get("streamed")).longValue())
        .as("requests streamed, of %s", stats)
        .isEqualTo(streamed() ? REQUESTS : longEnough);
  }

  @Test
  void theRouterDropsItsShareAfterPrefill() {
    assertThat(dropped()).isEqualTo(3);
  }

  @Test
  void theDroppedLeasesExpireOnThePrefillProcessAndNothingStaysHeld() {
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              Map<String, Object> status = prefill.producerStatus();
              assertThat(status.get("liveLeases")).isEqualTo(0);
              assertThat(status.get("leasesEnded"))
                  .isEqualTo(
                      Map.of(
                          "READ",
                          REQUESTS - dropped(),
                          "EXPIRED",
                          dropped(),
                          "REVOKED",
                          0,
                          "RELEASED",
                          0));
            });
  }

  private int dropped() {
    return (int)
        answers.stream()
            .filter(a -> a.status() == 503)
            .filter(a -> a.body().toString().contains(DroppedAfterPrefillException.TYPE))
            .count();
  }

  private record Answer(String prompt, int maxTokens, Map<String, Object> body) {
    int status() {
      return (Integer) body.get("_status");
    }
  }
}
