package io.kvbridge.sample.router;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.lease.EndReason;
import io.kvbridge.sample.AbandoningClient;
import io.kvbridge.sample.FaultInjection;
import io.kvbridge.sample.completions.ClientDisconnects;
import io.kvbridge.sample.node.Node;
import io.kvbridge.tck.faults.Faults;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.json.JsonMapper;

/**
 * A client of the router that closes its connection has its request cancelled, with a real client
 * on a socket, on an all-in-one server whose router reaches the prefill node through a {@link
 * HoldingProxy}. Gone while the prefill node works: as soon as the prefill node answers, the router
 * revokes the lease, and the decode node is never called. Gone while the decode node loads: the
 * router closes its connection to the decode node, which cancels the load; the lease ends RELEASED.
 * Either way every block comes back at once, long before any lease could expire. A client that
 * asked for a stream, of a completion or a chat, is cancelled the same way.
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "kvbridge.sample.prefill.engine-id=router-disconnect-test-prefill",
      "kvbridge.sample.decode.engine-id=router-disconnect-test-decode",
      "kvbridge.fake.fabric=router-disconnect-test",
      "kvbridge.sample.disconnect-check-interval=20ms",
      "kvbridge.sample.router.health-interval=1h",
      "kvbridge.lease.duration=60s",
      "kvbridge.lease.max-lifetime=120s",
      "kvbridge.sample.demo.enabled=false",
      // Every test sends the same prompt: a decode node that cached it would load nothing.
      "kvbridge.sample.engine.prefix-cache-blocks=0"
    })
@Import(FaultInjection.class)
@DirtiesContext
class RouterDisconnectTest {

  private static final String PROMPT =
      "A prompt long enough to fill a few blocks of sixteen tokens each, and then some more.";
  private static final HoldingProxy PREFILL = HoldingProxy.start();

  @DynamicPropertySource
  static void throughTheProxy(DynamicPropertyRegistry properties) {
    properties.add("kvbridge.sample.router.prefill-urls", () -> PREFILL.url() + "/prefill");
  }

  @LocalServerPort int port;

  @Autowired Faults faults;
  @Autowired ClientDisconnects disconnects;
  @Autowired PdRouter router;

  @Autowired
  @Qualifier("prefillNode")
  Node prefill;

  @Autowired
  @Qualifier("decodeNode")
  Node decode;

  @BeforeEach
  void targetThisServer() {
    PREFILL.target(URI.create("http://127.0.0.1:" + port));
  }

  @AfterEach
  void letEverythingThrough() {
    PREFILL.release();
    faults.unstallReads();
  }

  @AfterAll
  static void stopTheProxy() {
    PREFILL.close();
  }

  @Test
  void aClientGoneWhileThePrefillNodeWorksHasTheLeaseRevokedAsSoonAsThePrefillNodeAnswers() {
    long revoked = leasesEnded(EndReason.REVOKED);
    long cancelled = router.stats().cancelled();
    long decoded = decode.engine().stats().completed() + decode.engine().stats().failed();
    long gone = disconnects.disconnects();
    long decodeCalls = decodeCalls();
    PREFILL.hold();
    AbandoningClient client = AbandoningClient.post(port, "/v1/completions", request());
    // The prefill node has answered and holds the prompt's blocks under a lease.
    await().until(() -> PREFILL.held() == 1);
    assertThat(prefill.engine().stats().heldBlocks()).isPositive();

    client.close();
    await().until(() -> disconnects.disconnects() == gone + 1);
    PREFILL.release();

    await().until(() -> leasesEnded(EndReason.REVOKED) == revoked + 1);
    await().until(() -> prefill.engine().stats().heldBlocks() == 0);
    await().until(() -> router.stats().cancelled() == cancelled + 1);
    assertThat(decode.engine().stats().completed() + decode.engine().stats().failed())
        .isEqualTo(decoded);
    assertThat(decodeCalls()).isEqualTo(decodeCalls);
  }

  @Test
  void aClientGoneWhileTheDecodeNodeLoadsHasTheLoadCancelledAndTheLeaseReleased() {
    long released = leasesEnded(EndReason.RELEASED);
    long cancelled = router.stats().cancelled();
    faults.stallNextReads(1);
    AbandoningClient client = AbandoningClient.post(port, "/v1/completions", request());
    await().until(() -> decode.engine().stats().loading() == 1);

    client.close();

    await().until(() -> leasesEnded(EndReason.RELEASED) == released + 1);
    await().until(() -> decode.engine().stats().loading() == 0);
    await().until(() -> decode.engine().stats().heldBlocks() == 0);
    await().until(() -> prefill.engine().stats().heldBlocks() == 0);
    await().until(() -> router.stats().cancelled() == cancelled + 1);
    assertThat(router.stats().decode().get(0).cancelled()).isPositive();
  }

  @Test
  void aStreamingClientGoneWhileTheDecodeNodeLoadsHasTheLoadCancelledAndTheLeaseReleased() {
    long released = leasesEnded(EndReason.RELEASED);
    long cancelled = router.stats().cancelled();
    faults.stallNextReads(1);
    AbandoningClient client = AbandoningClient.post(port, "/v1/completions", streamed());
    await().until(() -> decode.engine().stats().loading() == 1);

    client.close();

    await().until(() -> leasesEnded(EndReason.RELEASED) == released + 1);
    await().until(() -> decode.engine().stats().loading() == 0);
    await().until(() -> decode.engine().stats().heldBlocks() == 0);
    await().until(() -> prefill.engine().stats().heldBlocks() == 0);
    await().until(() -> router.stats().cancelled() == cancelled + 1);
  }

  @Test
  void aStreamingChatClientGoneWhileThePrefillNodeWorksHasTheLeaseRevoked() {
    long revoked = leasesEnded(EndReason.REVOKED);
    long gone = disconnects.disconnects();
    PREFILL.hold();
    AbandoningClient client =
        AbandoningClient.post(
            port,
            "/v1/chat/completions",
            JsonMapper.shared()
                .writeValueAsString(
                    Map.of(
                        "messages",
                        List.of(Map.of("role", "user", "content", PROMPT)),
                        "max_tokens",
                        4,
                        "stream",
                        true)));
    await().until(() -> PREFILL.held() == 1);

    client.close();
    await().until(() -> disconnects.disconnects() == gone + 1);
    PREFILL.release();

    await().until(() -> leasesEnded(EndReason.REVOKED) == revoked + 1);
    await().until(() -> prefill.engine().stats().heldBlocks() == 0);
    assertThat(decode.engine().stats().heldBlocks()).isZero();
  }

  @Test
  void aClientThatStaysWhileThePrefillNodesAnswerIsHeldIsAnswered() {
    long gone = disconnects.disconnects();
    PREFILL.hold();
    try (AbandoningClient client = AbandoningClient.post(port, "/v1/completions", request())) {
      await()
          .during(Duration.ofMillis(300))
          .atMost(Duration.ofSeconds(10))
          .until(() -> PREFILL.held() == 1);

      PREFILL.release();

      assertThat(client.statusLine()).isEqualTo("HTTP/1.1 200 ");
    }
    assertThat(disconnects.disconnects()).isEqualTo(gone);
  }

  /** The router's calls to the decode node so far, however they ended. */
  private long decodeCalls() {
    NodeStats stats = router.stats().decode().get(0);
    return stats.served() + stats.failed() + stats.cancelled();
  }

  private long leasesEnded(EndReason reason) {
    return prefill
        .engine()
        .connector()
        .status()
        .producer()
        .orElseThrow()
        .leasesEnded()
        .getOrDefault(reason, 0L);
  }

  private static String streamed() {
    return JsonMapper.shared()
        .writeValueAsString(Map.of("prompt", PROMPT, "max_tokens", 4, "stream", true));
  }

  private static String request() {
    return JsonMapper.shared().writeValueAsString(Map.of("prompt", PROMPT, "max_tokens", 4));
  }
}
