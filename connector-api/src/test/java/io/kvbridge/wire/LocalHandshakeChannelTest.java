package io.kvbridge.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.net.DropReason;
import io.kvbridge.net.HandshakeAddress;
import java.io.IOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class LocalHandshakeChannelTest {

  private static final HandshakeAddress LOCAL = HandshakeAddress.parse("local");

  private final HandshakeChannel channel = HandshakeChannel.forAddress(LOCAL);

  @Test
  void localChannelCarriesTheSameConversation() throws Exception {
    AtomicReference<byte[]> greetingSeen = new AtomicReference<>();
    TestResponder responder =
        new TestResponder(
            new byte[] {7, 7}, (greeting, request) -> TestResponder.concat(greeting, request));
    try (HandshakeChannel.Server server = channel.serve(LOCAL, engineId(), responder)) {
      byte[] answer =
          channel.exchange(
              server.address(),
              greeting -> {
                greetingSeen.set(greeting);
                return new byte[] {1, 2};
              },
              Duration.ofSeconds(1));

      assertThat(greetingSeen.get()).containsExactly(7, 7);
      assertThat(answer).containsExactly(7, 7, 1, 2);
    }
  }

  @Test
  void framesCrossTheLocalChannelAsCopies() throws Exception {
    byte[] request = {1, 2};
    AtomicReference<byte[]> requestSeen = new AtomicReference<>();
    AtomicReference<byte[]> greetingAnswered = new AtomicReference<>();
    TestResponder responder =
        new TestResponder(
            new byte[] {7},
            (greeting, received) -> {
              greetingAnswered.set(greeting);
              requestSeen.set(received);
              return received;
            });
    try (HandshakeChannel.Server server = channel.serve(LOCAL, engineId(), responder)) {
      byte[] answer =
          channel.exchange(
              server.address(),
              greeting -> {
                greeting[0] = 0;
                return request;
              },
              Duration.ofSeconds(1));
      request[0] = 9;
      answer[1] = 9;

      assertThat(greetingAnswered.get()).containsExactly(7);
      assertThat(requestSeen.get()).containsExactly(1, 2);
    }
  }

  @Test
  void localChannelRefusesAnAddressNobodyServes() {
    assertThatThrownBy(
            () ->
                channel.exchange(
                    HandshakeAddress.parse("local://nobody"),
                    greeting -> new byte[1],
                    Duration.ofSeconds(1)))
        .isInstanceOf(ConnectException.class)
        .hasMessageContaining("local://nobody");
  }

  @Test
  void serverRequestedAsLocalIsNamedAfterItsEngine() throws Exception {
    String engineId = engineId();
    try (HandshakeChannel.Server server = channel.serve(LOCAL, engineId, TestResponder.echo())) {
      assertThat(server.address()).hasToString("local://" + engineId);
    }
  }

  @Test
  void serverRequestedUnderANameAnswersAtThatName() throws Exception {
    String name = "named-" + UUID.randomUUID();
    try (HandshakeChannel.Server server =
        channel.serve(
            HandshakeAddress.parse("local://" + name), engineId(), TestResponder.echo())) {
      assertThat(server.address()).hasToString("local://" + name);
      assertThat(
              channel.exchange(
                  HandshakeAddress.parse("local://" + name),
                  greeting -> new byte[] {5},
                  Duration.ofSeconds(1)))
          .containsExactly(5);
    }
  }

  @Test
  void localChannelRefusesATcpAddress() {
    assertThatThrownBy(
            () ->
                channel.exchange(
                    HandshakeAddress.parse("tcp://127.0.0.1:1"),
                    greeting -> new byte[1],
                    Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("tcp://127.0.0.1:1");
  }

  @Test
  void framesOfTheLargestSizeCross() throws Exception {
    byte[] largest = new byte[Handshake.MAX_FRAME_BYTES];
    TestResponder responder = new TestResponder(largest, (greeting, request) -> request);
    try (HandshakeChannel.Server server = channel.serve(LOCAL, engineId(), responder)) {
      byte[] answer =
          channel.exchange(server.address(), greeting -> greeting, Duration.ofSeconds(1));

      assertThat(answer).hasSize(Handshake.MAX_FRAME_BYTES);
    }
  }

  @Test
  void framesOverTheLargestSizeAreRefusedNamingWhichFrame() throws Exception {
    byte[] tooLarge = new byte[Handshake.MAX_FRAME_BYTES + 1];
    String refused =
        " of " + tooLarge.length + " bytes refused; limit " + Handshake.MAX_FRAME_BYTES;
    try (HandshakeChannel.Server greets = channel.serve(LOCAL, engineId(), responder(tooLarge, 0));
        HandshakeChannel.Server answers =
            channel.serve(LOCAL, engineId(), responder(new byte[1], tooLarge.length))) {
      assertThatThrownBy(() -> exchange(greets, new byte[1]))
          .isInstanceOf(IOException.class)
          .hasMessage("handshake greeting" + refused);
      assertThatThrownBy(() -> exchange(answers, tooLarge))
          .isInstanceOf(IOException.class)
          .hasMessage("handshake request" + refused);
      assertThatThrownBy(() -> exchange(answers, new byte[1]))
          .isInstanceOf(IOException.class)
          .hasMessage("handshake answer" + refused);
    }
  }

  @Test
  void localServerDropsNothingAndSaysSoForEveryReason() throws Exception {
    try (HandshakeChannel.Server server = channel.serve(LOCAL, engineId(), TestResponder.echo())) {
      assertThat(server.droppedConnections())
          .containsOnlyKeys(DropReason.values())
          .allSatisfy((reason, count) -> assertThat(count).isZero());
    }
  }

  @Test
  void secondServerUnderATakenNameIsRefusedAndTheFirstKeepsAnswering() throws Exception {
    String engineId = engineId();
    try (HandshakeChannel.Server first = channel.serve(LOCAL, engineId, TestResponder.echo())) {
      assertThatThrownBy(() -> channel.serve(LOCAL, engineId, TestResponder.echo()))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("local://" + engineId + " is taken");
      assertThat(exchange(first, new byte[] {4})).containsExactly(4);
    }
  }

  @Test
  void closedServerNoLongerAnswers() throws Exception {
    HandshakeChannel.Server server = channel.serve(LOCAL, engineId(), TestResponder.echo());

    server.close();

    assertThatThrownBy(() -> exchange(server, new byte[1])).isInstanceOf(ConnectException.class);
  }

  private byte[] exchange(HandshakeChannel.Server server, byte[] request) throws IOException {
    return channel.exchange(server.address(), greeting -> request, Duration.ofSeconds(1));
  }

  /** Greets with {@code greeting} and answers with {@code answerLength} bytes. */
  private static TestResponder responder(byte[] greeting, int answerLength) {
    return new TestResponder(greeting, (g, request) -> new byte[answerLength]);
  }

  private static String engineId() {
    return "local-test-" + UUID.randomUUID();
  }
}
