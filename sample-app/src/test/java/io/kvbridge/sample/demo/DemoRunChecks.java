package io.kvbridge.sample.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.lease.EndReason;
import io.kvbridge.sample.SampleProperties;
import io.kvbridge.sample.engine.EngineShape;
import io.kvbridge.sample.engine.ToyModel;
import io.kvbridge.sample.node.NodeKind;
import io.kvbridge.sample.router.PdRouter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.web.client.RestClient;

/**
 * What every run of the all-in-one demo shows, whatever the engines' shapes: every completion
 * matches the colocated reference, exactly the dropped requests' leases expire, the decode node's
 * prefix cache serves part of the prompts and releases the leases it holds whole, nothing stays
 * held, and the actuator shows the same numbers as the summary. Each subclass starts the
 * application with a small demo (30 requests, 2-second leases) and its own engines.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class DemoRunChecks {

  private static final ParameterizedTypeReference<Map<String, Object>> JSON =
      new ParameterizedTypeReference<>() {};

  @Autowired DemoReport report;
  @Autowired PdRouter router;
  @Autowired SampleProperties properties;
  @LocalServerPort int port;

  DemoSummary summary;

  @BeforeAll
  void awaitDemo() throws Exception {
    summary = report.summary().get(60, TimeUnit.SECONDS);
  }

  @Test
  void theRouterFindsEachNodeOfThisServerUpThroughItsEnginesHealth() {
    router.probe().join();

    assertThat(router.stats().prefill())
        .singleElement()
        .satisfies(node -> assertThat(node.health()).isEqualTo("health UP"));
    assertThat(router.stats().decode())
        .singleElement()
        .satisfies(node -> assertThat(node.health()).isEqualTo("health UP"));
  }

  @Test
  void everyRequestIsServedOrDeliberatelyDropped() {
    assertThat(summary.requests()).isEqualTo(30);
    assertThat(summary.failed()).as("failures: %s", summary.failures()).isZero();
    assertThat(summary.served() + summary.dropped()).isEqualTo(30);
    assertThat(summary.dropped()).isPositive();
  }

  @Test
  void noCompletionDiffersFromTheColocatedReference() {
    assertThat(summary.mismatches()).isZero();
    assertThat(summary.servedFromTransfer()).isPositive();
  }

  @Test
  void exactlyTheDroppedRequestsLeasesExpire() {
    assertThat(summary.ended(EndReason.EXPIRED)).isEqualTo(summary.dropped());
    assertThat(summary.ended(EndReason.READ)).isEqualTo(summary.servedFromTransfer());
    assertThat(summary.ended(EndReason.REVOKED)).isZero();
  }

  @Test
  void laterTurnsTakeTheirStartFromTheDecodeNodesPrefixCache() {
    assertThat(summary.tokensFromCache()).isPositive();
    // A turn the decode node holds enough of goes straight to it; the rest through the prefill
    // node, which leases what the decode node does not hold (nothing: released unread).
    assertThat(summary.servedAlone()).isPositive();
    assertThat(summary.ended(EndReason.RELEASED)).isEqualTo(summary.servedLocally());
    assertThat(summary.leasesGranted())
        .isEqualTo(summary.served() + summary.dropped() - summary.servedAlone());
    // Only the decode node's own requests are computed there.
    assertThat(summary.tokensComputed()).isPositive();
  }

  @Test
  void theSummaryNamesTheEnginesShapes() {
    EngineShape prefill = properties.prefillEngine();
    EngineShape decode = properties.decodeEngine();
    assertThat(summary.engines())
        .startsWith(
            "prefill TP "
                + prefill.tpDegree()
                + " x "
                + prefill.tokensPerBlock()
                + "-token blocks, decode TP "
                + decode.tpDegree()
                + " x "
                + decode.tokensPerBlock()
                + "-token blocks");
  }

  @Test
  void thePrefillNodeHoldsNoBlocksOnceTheLeasesArePast() {
    assertThat(summary.blocksHeldOnPrefill()).isZero();
    assertThat(summary.liveLeases()).isZero();
    assertThat(summary.blocksHeldOnDecode()).isZero();
    assertThat(summary.passed()).isTrue();
  }

  @Test
  void theKvbridgeEndpointShowsTheSummarysNumbers() {
    Map<String, Object> body = get("/actuator/kvbridge");
    Map<String, Object> prefill = part(connector(body, prefillId()), "producer");
    Map<String, Object> decode = part(connector(body, decodeId()), "consumer");

    // The time-to-first-token comparison ran after the summary's numbers: each of its requests
    // took one more lease, read whole.
    int compared = summary.ttft().map(t -> 2 * t.requests()).orElse(0);
    assertThat(prefill.get("leasesEnded"))
        .isEqualTo(
            Map.of(
                "RELEASED", (int) summary.ended(EndReason.RELEASED),
                "READ", (int) summary.ended(EndReason.READ) + compared,
                "EXPIRED", (int) summary.ended(EndReason.EXPIRED),
                "REVOKED", (int) summary.ended(EndReason.REVOKED)));
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(part(connector(get("/actuator/kvbridge"), prefillId()), "producer"))
                    .containsEntry("liveLeases", 0));
    assertThat(((Number) prefill.get("leasesGranted")).longValue())
        .isEqualTo(summary.leasesGranted() + compared);
    assertThat(((Number) decode.get("readsCompleted")).longValue())
        .isEqualTo(summary.servedFromTransfer() + compared);
    if (compared == 0) {
      assertThat(((Number) decode.get("bytesRead")).longValue()).isEqualTo(summary.bytesMoved());
    } else {
      assertThat(((Number) decode.get("bytesRead")).longValue())
          .isGreaterThan(summary.bytesMoved());
    }
  }

  @Test
  void theTimeToFirstTokenIsComparedBothWaysWithTheReferencesOutputs() {
    assertThat(summary.ttft())
        .hasValueSatisfying(
            t -> {
              assertThat(t.mismatches()).isZero();
              assertThat(t.streamedNanos()).isPositive();
              assertThat(t.wholeNanos()).isPositive();
              assertThat(t.notStreamed())
                  .as("prompts of %d tokens leased whole", t.promptTokens())
                  .isEqualTo(t.promptTokens() >= 1024 ? 0 : t.requests());
            });
    assertThat(summary.format()).contains("time to first token", "streamed layer by layer");
  }

  @Test
  void theHealthEndpointShowsEachEngineUnderKvbridge() {
    Map<String, Object> prefill = get("/actuator/health/kvbridge/" + prefillId());
    Map<String, Object> decode = get("/actuator/health/kvbridge/" + decodeId());

    assertThat(prefill).containsEntry("status", "UP");
    assertThat(part(prefill, "details"))
        .containsEntry("role", "producer")
        .containsEntry("liveLeases", summary.liveLeases());
    assertThat(decode).containsEntry("status", "UP");
    assertThat(part(decode, "details")).containsEntry("role", "consumer");
  }

  @Test
  void theInfoEndpointShowsTheSummary() {
    @SuppressWarnings("unchecked")
    Map<String, Object> demo = (Map<String, Object>) get("/actuator/info").get("kvbridgeDemo");

    assertThat(demo)
        .containsEntry("passed", true)
        .containsEntry("dropped", summary.dropped())
        .containsEntry("mismatches", 0);
  }

  /**
   * The bytes of KV the decode engine reads per token moved: the toy model's, read once (a head
   * that several decode ranks hold is read by each).
   */
  long bytesPerToken() {
    return ToyModel.BYTES_PER_TOKEN;
  }

  @Test
  void bytesMovedAreTheMovedTokensKv() {
    assertThat(summary.bytesMoved()).isEqualTo(summary.tokensMoved() * bytesPerToken());
  }

  @Test
  void theRouterStopsDroppingRequestsOnceTheDemoIsOver() {
    await().untilAsserted(() -> assertThat(router.faults().share()).isZero());
  }

  private String prefillId() {
    return NodeKind.PREFILL.engineId(properties);
  }

  private String decodeId() {
    return NodeKind.DECODE.engineId(properties);
  }

  private Map<String, Object> get(String path) {
    return RestClient.create("http://127.0.0.1:" + port).get().uri(path).retrieve().body(JSON);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> connector(Map<String, Object> body, String engineId) {
    List<Map<String, Object>> connectors = (List<Map<String, Object>>) body.get("connectors");
    return connectors.stream()
        .filter(c -> engineId.equals(c.get("engineId")))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no connector " + engineId + " in " + body));
  }

  /** The object {@code name} of {@code json}, e.g. a connector's {@code producer} part. */
  @SuppressWarnings("unchecked")
  private static Map<String, Object> part(Map<String, Object> json, String name) {
    Object part = json.get(name);
    if (part == null) {
      throw new AssertionError("no " + name + " in " + json);
    }
    return (Map<String, Object>) part;
  }
}
