package io.kvbridge.runtime;

import static io.kvbridge.runtime.HandshakeFixture.freshLocalAddress;
import static io.kvbridge.runtime.HandshakeFixture.ranks;
import static io.kvbridge.runtime.HandshakeFixture.serve;
import static io.kvbridge.runtime.HandshakeFixture.settings;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.runtime.HandshakeClient.Resolution;
import io.kvbridge.runtime.HandshakeFixture.RecordingObserver;
import io.kvbridge.wire.HandshakeChannel;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class HandshakeResponderTest {

  private static final long PRODUCER_INCARNATION = 0x33;

  private final RecordingObserver observer = new RecordingObserver();
  private final StubTransport producerTransport = new StubTransport("p-agent");
  private final HandshakeResponder responder =
      new HandshakeResponder(
          settings("p", PRODUCER_INCARNATION, () -> 0),
          ranks(producerTransport),
          new ConnectorCounters(observer));
  private final String address = freshLocalAddress();
  private final HandshakeChannel.Server server = serve(address, "p", responder);
  private final List<HandshakeClient> clients = new ArrayList<>();

  @AfterEach
  void close() {
    clients.forEach(HandshakeClient::close);
    server.close();
  }

  @Test
  void forgettingAConsumerForgetsOnlyItsAgents() {
    handshake(consumer("c1", 1));
    handshake(consumer("c2", 1));
    assertThat(responder.consumers()).containsExactlyInAnyOrder("c1", "c2");

    responder.forgetConsumer("c1");

    assertThat(responder.consumers()).containsExactly("c2");
    assertThat(responder.consumerOf("c1-agent")).isEmpty();
    assertThat(responder.consumerOf("c2-agent")).contains("c2");
    assertThat(producerTransport.events)
        .containsExactly("load c1-agent", "load c2-agent", "invalidate c1-agent");
  }

  @Test
  void aForgottenAgentIsLoadedAgainWhenItsConsumerHandshakesAgain() {
    HandshakeClient c1 = consumer("c1", 1);
    handshake(c1);

    responder.forget("c1-agent");

    assertThat(responder.consumerOf("c1-agent")).isEmpty();
    assertThat(producerTransport.events).containsExactly("load c1-agent", "invalidate c1-agent");

    c1.endRound();
    c1.suspect("p");

    assertThat(c1.current("p")).isPresent();
    assertThat(responder.consumerOf("c1-agent")).contains("c1");
    assertThat(producerTransport.events)
        .containsExactly("load c1-agent", "invalidate c1-agent", "load c1-agent");
  }

  @Test
  void forgettingAnAgentNoConsumerSpeaksForChangesNothing() {
    handshake(consumer("c1", 1));

    responder.forget("stranger-agent");

    assertThat(responder.consumerOf("c1-agent")).contains("c1");
    assertThat(producerTransport.events).containsExactly("load c1-agent");
  }

  @Test
  void aConsumerHandshakingAgainAsTheSameIncarnationKeepsItsAgent() {
    HandshakeClient c1 = consumer("c1", 1);
    handshake(c1);
    c1.endRound();

    c1.suspect("p");

    assertThat(c1.current("p")).isPresent();
    assertThat(producerTransport.events).containsExactly("load c1-agent");
  }

  @Test
  void aRestartedConsumerHasItsOldAgentDroppedBeforeTheNewOneIsLoaded() {
    handshake(consumer("c1", 1));

    handshake(consumer("c1", 2));

    assertThat(responder.consumerOf("c1-agent")).contains("c1");
    assertThat(producerTransport.events)
        .containsExactly("load c1-agent", "invalidate c1-agent", "load c1-agent");
  }

  @Test
  void consumerMetadataTheTransportRejectsRefusesTheHandshake() {
    producerTransport.rejectMetadata = true;

    Resolution resolution = consumer("c1", 1).resolve("p", address, PRODUCER_INCARNATION);

    String reason = "consumer metadata of c1 rejected";
    assertThat(resolution)
        .isEqualTo(new Resolution.Failed("producer p refused the handshake: " + reason));
    assertThat(observer.events).containsExactly("rejected HANDSHAKE_REFUSED: " + reason);
    assertThat(responder.consumers()).isEmpty();
  }

  private HandshakeClient consumer(String engineId, long incarnation) {
    HandshakeClient client =
        new HandshakeClient(
            settings(engineId, incarnation, () -> 0),
            ranks(new StubTransport(engineId + "-agent")),
            new ConnectorCounters(ConnectorObserver.NONE));
    clients.add(client);
    return client;
  }

  private void handshake(HandshakeClient client) {
    assertThat(client.resolve("p", address, PRODUCER_INCARNATION))
        .isInstanceOf(Resolution.Ready.class);
  }
}
