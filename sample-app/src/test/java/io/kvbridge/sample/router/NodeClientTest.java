package io.kvbridge.sample.router;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.sample.completions.RevokeRequest;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

class NodeClientTest {

  private final NodeClient client =
      new NodeClient(
          JsonMapper.shared(), Duration.ofSeconds(2), Duration.ofSeconds(2), Duration.ofSeconds(1));

  @Test
  void aRevokeThatReachesNoNodeFailsSayingSo() {
    URI nowhere = URI.create("http://127.0.0.1:1/revoke");

    CompletableFuture<Boolean> revoked =
        client.revoke(nowhere, new RevokeRequest("cmpl-1", "the decode call failed"));

    assertThat(revoked)
        .failsWithin(Duration.ofSeconds(10))
        .withThrowableThat()
        .havingCause()
        .withMessageStartingWith("revoke at http://127.0.0.1:1/revoke could not be reached: ");
  }
}
