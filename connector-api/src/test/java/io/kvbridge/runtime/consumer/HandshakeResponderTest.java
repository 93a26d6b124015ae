package io.kvbridge.runtime.consumer;

import static io.kvbridge.runtime.consumer.HandshakeFixture.freshLocalAddress;
import static io.kvbridge.runtime.consumer.HandshakeFixture.ranks;
import static io.kvbridge.runtime.consumer.HandshakeFixture.serve;
import static io.kvbridge.runtime.consumer.HandshakeFixture.settings;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.runtime.consumer.HandshakeClient.Resolution;
import io.kvbridge.runtime.consumer.HandshakeFixture.RecordingObserver;
import io.kvbridge.runtime.engine.ConnectorCounters;
import io.kvbridge.runtime.engine.StubTransport;
import io.kvbridge.runtime.producer.HandshakeResponder;
import io.kvbridge.wire.HandshakeChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class HandshakeResponderTest {

  private static final long PRODUCER_INCARNATION = 0x33;

  private final RecordingObserver observer = new RecordingObserver();
  private final StubTransport producerTransport = new StubTransport("p-agent");
  private final List<String> restarts = new CopyOnWriteArrayList<>();
  private final HandshakeResponder responder =
      new HandshakeResponder(
          settings("p", PRODUCER_INCARNATION, () -> 0),
          ranks(producerTransport),
          new ConnectorCounters(observer),
          (engineId, from, to) -> restarts.add(engineId + " " + from + " -> " + to));
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

  @Test
  void aRestartedConsumerIsReportedOnceSoItsEarlierStartsLeasesEnd() {
    handshake(consumer("c1", 1));
    handshake(consumer("c1", 2));
    handshake(consumer("c1", 2));

    assertThat(restarts).containsExactly("c1 1 -> 2");
  }

  @Test
  void aReplayedRequestOfAnEarlierStartIsRefusedAsForgedAndTheLiveAgentStays() {
    handshake(consumer("c1", 2));

    Resolution replay = consumer("c1", 1).resolve("p", address, PRODUCER_INCARNATION);

    assertThat(replay)
        .isInstanceOfSatisfying(
            Resolution.Failed.class,
            f ->
                assertThat(f.reason())
                    .contains("handshake refused as forged")
                    .contains("older than its known incarnation 2"));
    assertThat(observer.events)
        .singleElement()
        .asString()
        .startsWith("rejected FORGED_PEER: handshake refused as forged: consumer c1");
    assertThat(responder.consumerOf("c1-agent")).contains("c1");
    assertThat(producerTransport.events).containsExactly("load c1-agent");
    assertThat(restarts).isEmpty();
  }

  @Test
  void aRequestNamingAnotherConsumersAgentIsRefusedAsForged() {
    handshake(consumer("c1", 1));

    Resolution impostor = consumer("c2", 5, "c1-agent").resolve("p", address, PRODUCER_INCARNATION);

    assertThat(impostor)
        .isInstanceOfSatisfying(
            Resolution.Failed.class,
            f -> assertThat(f.reason()).contains("which belongs to consumer c1"));
    assertThat(responder.consumers()).containsExactly("c1");
    assertThat(responder.consumerOf("c1-agent")).contains("c1");
    assertThat(producerTransport.events).containsExactly("load c1-agent");
  }

  @Test
  void theKnownStartOfAConsumerNamingAnotherAgentIsRefusedAsForged() {
    handshake(consumer("c1", 1));

    Resolution other = consumer("c1", 1, "x-agent").resolve("p", address, PRODUCER_INCARNATION);

    assertThat(other)
        .isInstanceOfSatisfying(
            Resolution.Failed.class,
            f -> assertThat(f.reason()).contains("but that start's agent is c1-agent"));
    assertThat(producerTransport.events).containsExactly("load c1-agent");
  }

  private HandshakeClient consumer(String engineId, long incarnation) {
    return consumer(engineId, incarnation, engineId + "-agent");
  }

  private HandshakeClient consumer(String engineId, long incarnation, String agent) {
    HandshakeClient client =
        new HandshakeClient(
            settings(engineId, incarnation, () -> 0),
            ranks(new StubTransport(agent)),
            new ConnectorCounters(ConnectorObserver.NONE));
    clients.add(client);
    return client;
  }

  private void handshake(HandshakeClient client) {
    assertThat(client.resolve("p", address, PRODUCER_INCARNATION))
        .isInstanceOf(Resolution.Ready.class);
  }
}
