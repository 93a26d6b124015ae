package io.kvbridge.sample.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.lease.EndReason;
import io.kvbridge.sample.AbandoningClient;
import io.kvbridge.sample.FaultInjection;
import io.kvbridge.sample.HttpApi;
import io.kvbridge.sample.completions.ClientDisconnects;
import io.kvbridge.tck.faults.Faults;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import tools.jackson.databind.json.JsonMapper;

/**
 * A node gives back at once what nobody will use. A client that closes its connection before the
 * answer has its request cancelled: seen on Tomcat, with a real client on a socket, while the
 * decode node loads the prompt's KV; a client that stays is answered. A prefill node revokes the
 * lease of a finished request on request ({@code POST /prefill/v1/leases/revoke}), as the router
 * asks when the parameters will never reach a decode node.
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "kvbridge.sample.prefill.engine-id=node-disconnect-test-prefill",
      "kvbridge.sample.decode.engine-id=node-disconnect-test-decode",
      "kvbridge.fake.fabric=node-disconnect-test",
      "kvbridge.sample.disconnect-check-interval=20ms",
      // Only a cancelled load can end a lease here: none expires during a test.
      "kvbridge.lease.duration=60s",
      "kvbridge.lease.max-lifetime=120s",
      "kvbridge.sample.demo.enabled=false",
      // Every test sends the same prompt: a decode node that cached it would load nothing.
      "kvbridge.sample.engine.prefix-cache-blocks=0"
    })
@Import(FaultInjection.class)
class NodeCancellationTest {

  private static final String PROMPT =
      "A prompt long enough to fill a few blocks of sixteen tokens each, and then some more.";

  @LocalServerPort int port;

  @Autowired Faults faults;
  @Autowired ClientDisconnects disconnects;

  @Autowired
  @Qualifier("prefillNode")
  Node prefill;

  @Autowired
  @Qualifier("decodeNode")
  Node decode;

  @AfterEach
  void unstall() {
    faults.unstallReads();
  }

  @Test
  void aClientThatClosesItsConnectionWhileTheDecodeNodeLoadsCancelsTheLoadAndTheLeaseIsReleased() {
    long released = leasesEnded(EndReason.RELEASED);
    long gone = disconnects.disconnects();
    faults.stallNextReads(1);
    AbandoningClient client = AbandoningClient.post(port, "/decode/v1/completions", toDecode());
    await().until(() -> decode.engine().stats().loading() == 1);

    client.close();

    await().until(() -> decode.engine().stats().loading() == 0);
    await().until(() -> decode.engine().stats().heldBlocks() == 0);
    await().until(() -> leasesEnded(EndReason.RELEASED) == released + 1);
    await().until(() -> prefill.engine().stats().heldBlocks() == 0);
    assertThat(disconnects.disconnects()).isEqualTo(gone + 1);
  }

  @Test
  void aClientThatStaysConnectedWhileTheDecodeNodeLoadsIsAnswered() {
    long gone = disconnects.disconnects();
    faults.stallNextReads(1);
    try (AbandoningClient client =
        AbandoningClient.post(port, "/decode/v1/completions", toDecode())) {
      // Twenty-five checks of the connection while the client waits: none cancels the load.
      await()
          .during(Duration.ofMillis(500))
          .atMost(Duration.ofSeconds(10))
          .until(() -> decode.engine().stats().loading() == 1);

      faults.unstallReads();

      assertThat(client.statusLine()).isEqualTo("HTTP/1.1 200 ");
    }
    assertThat(disconnects.disconnects()).isEqualTo(gone);
  }

  @Test
  void revokingAFinishedPrefillRequestsLeaseFreesItsBlocksAtOnce() {
    long revoked = leasesEnded(EndReason.REVOKED);
    String requestId = prefilledRequestId();

    HttpApi.Answer answer =
        api()
            .post(
                "/prefill/v1/leases/revoke",
                "{\"request_id\": \"" + requestId + "\", \"reason\": \"the client went away\"}");

    assertThat(answer.status()).isEqualTo(200);
    assertThat(answer.json()).isEqualTo(Map.of("request_id", requestId, "revoked", true));
    assertThat(leasesEnded(EndReason.REVOKED)).isEqualTo(revoked + 1);
    await().until(() -> prefill.engine().stats().heldBlocks() == 0);
  }

  @Test
  void revokingALeaseThatAlreadyEndedRevokesNothing() {
    String requestId = prefilledRequestId();
    String body = "{\"request_id\": \"" + requestId + "\"}";
    api().post("/prefill/v1/leases/revoke", body);

    HttpApi.Answer again = api().post("/prefill/v1/leases/revoke", body);

    assertThat(again.json()).containsEntry("revoked", false);
  }

  @Test
  void aRevocationWithoutARequestIdIsABadRequestNamingTheField() {
    HttpApi.Answer answer = api().post("/prefill/v1/leases/revoke", "{\"reason\": \"why\"}");

    assertThat(answer.error(400)).containsEntry("param", "request_id");
  }

  @Test
  void aRequestIdThatIsNotAStringIsABadRequestNamingTheField() {
    HttpApi.Answer answer = api().post("/prefill/v1/leases/revoke", "{\"request_id\": 7}");

    assertThat(answer.errorMessage(400)).isEqualTo("request_id must be a string");
  }

  @Test
  void theDecodeNodeHoldsNoLeasesToRevoke() {
    HttpApi.Answer answer = api().post("/decode/v1/leases/revoke", "{\"request_id\": \"x\"}");

    assertThat(answer.errorMessage(404))
        .isEqualTo("there is no endpoint at POST /decode/v1/leases/revoke");
  }

  private HttpApi api() {
    return new HttpApi(port);
  }

  private String prefilledRequestId() {
    @SuppressWarnings("unchecked")
    Map<String, Object> params =
        (Map<String, Object>)
            api()
                .post("/prefill/v1/completions", request(Map.of("do_remote_decode", true)))
                .json()
                .get("kv_transfer_params");
    return (String) params.get("request_id");
  }

  private String toDecode() {
    Map<String, Object> prefilled =
        new HttpApi(port)
            .post("/prefill/v1/completions", request(Map.of("do_remote_decode", true)))
            .json();
    return request(prefilled.get("kv_transfer_params"));
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

  private static String request(Object params) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("prompt", PROMPT);
    body.put("max_tokens", 4);
    body.put("kv_transfer_params", params);
    return JsonMapper.shared().writeValueAsString(body);
  }
}
