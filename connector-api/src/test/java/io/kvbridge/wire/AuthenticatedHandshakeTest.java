package io.kvbridge.wire;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.net.HandshakeAddress;
import io.kvbridge.net.HandshakeSecret;
import io.kvbridge.transfer.MemoryKind;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * The handshake conversation of {@link ProducerHandshake} and {@link ConsumerHandshake}, with and
 * without the deployment's secret, driven frame by frame through a channel that records (and may
 * change) every frame, as a relay between D and P would.
 */
class AuthenticatedHandshakeTest {

  private static final Optional<HandshakeSecret> SECRET =
      Optional.of(HandshakeSecret.of("a deployment secret of some length"));
  private static final Optional<HandshakeSecret> OTHER =
      Optional.of(HandshakeSecret.of("another deployment secret, also long"));
  private static final HandshakeAddress P = HandshakeAddress.parse("local://p");
  private static final KvLayout LAYOUT =
      new KvLayout("model-x", 2, 4, 2, 8, 0, 8, 64, 16, 512, KvLayout.MemoryOrder.HEAD_MAJOR);
  private static final byte[] P_METADATA = "P-METADATA-SECRET-BLOB".getBytes(US_ASCII);
  private static final byte[] D_METADATA = "D-METADATA-OWN-BLOB".getBytes(US_ASCII);
  private static final Handshake.Request REQUEST =
      new Handshake.Request("decode-0", 7L, List.of(LAYOUT), D_METADATA);
  private static final Handshake.Accepted ACCEPTED =
      new Handshake.Accepted(
          "prefill-0",
          9L,
          123L,
          List.of(
              new Handshake.Rank(
                  LAYOUT, List.of(0x7f00_1234_0000L), 0, MemoryKind.DRAM, P_METADATA)));

  private final List<String> refused = new ArrayList<>();
  private final AtomicInteger decided = new AtomicInteger();

  private ProducerHandshake producer(Optional<HandshakeSecret> secret) {
    return new ProducerHandshake(
        secret,
        request -> {
          decided.incrementAndGet();
          assertThat(request).isEqualTo(REQUEST);
          return ACCEPTED;
        },
        new ProducerHandshake.Listener() {
          @Override
          public void unauthenticated(String why) {
            refused.add("unauthenticated: " + why);
          }

          @Override
          public void malformed(String why) {
            refused.add("malformed: " + why);
          }
        });
  }

  private static ConsumerHandshake.Outcome consume(
      HandshakeChannel channel, Optional<HandshakeSecret> secret) throws IOException {
    return ConsumerHandshake.run(
        channel, P, REQUEST, secret, Duration.ofSeconds(5), System::nanoTime);
  }

  @Test
  void pairWithoutASecretExchangesRequestAndAcceptanceInThreeFrames() throws Exception {
    Relay relay = new Relay(producer(Optional.empty()));

    ConsumerHandshake.Outcome outcome = consume(relay, Optional.empty());

    assertThat(outcome.response()).isEqualTo(ACCEPTED);
    assertThat(relay.toP).hasSize(1);
    assertThat(relay.toD).hasSize(2);
    assertThat(outcome.answerReceivedNanos()).isGreaterThanOrEqualTo(outcome.requestSentNanos());
  }

  @Test
  void pairWithTheSecretExchangesFiveFramesAndAgrees() throws Exception {
    Relay relay = new Relay(producer(SECRET));

    assertThat(consume(relay, SECRET).response()).isEqualTo(ACCEPTED);
    assertThat(relay.toD).hasSize(3);
    assertThat(relay.toP).hasSize(2);
    assertThat(decided).hasValue(1);
    assertThat(refused).isEmpty();
  }

  @Test
  void relayBetweenDAndPLearnsNothingOfEitherSide() throws Exception {
    Relay relay = new Relay(producer(SECRET));

    consume(relay, SECRET);

    for (byte[] frame : relay.all()) {
      assertThat(contains(frame, P_METADATA)).as("P's metadata in the clear").isFalse();
      assertThat(contains(frame, D_METADATA)).as("D's metadata in the clear").isFalse();
      assertThat(contains(frame, "prefill-0".getBytes(US_ASCII))).isFalse();
      assertThat(contains(frame, "decode-0".getBytes(US_ASCII))).isFalse();
      assertThat(contains(frame, LAYOUT.encode())).as("a layout in the clear").isFalse();
    }
  }

  @Test
  void impostorThatSetsTheFlagButCannotProveTheSecretGetsOnlyAFreshNonce() {
    // The impostor greets as P would and answers the challenge with a proof made up of zeros.
    Impostor impostor = new Impostor(Handshake.encodeProof(new byte[HandshakeKeys.PROOF_BYTES]));

    assertThatThrownBy(() -> consume(impostor, SECRET))
        .isInstanceOf(ConsumerHandshake.RefusedFrameException.class)
        .hasMessageContaining("did not prove the deployment's secret")
        .hasMessageContaining("nothing of this consumer's was sent")
        .satisfies(e -> assertThat(((ConsumerHandshake.RefusedFrameException) e).authentication()));
    assertThat(impostor.received).hasSize(1);
    assertThat(impostor.received.get(0)).hasSize(5 + Handshake.NONCE_BYTES);
  }

  @Test
  void impostorThatRelaysAProofOfAnotherConversationIsRefused() throws Exception {
    Relay honest = new Relay(producer(SECRET));
    consume(honest, SECRET);
    Impostor replaying = new Impostor(honest.toD.get(1));

    assertThatThrownBy(() -> consume(replaying, SECRET))
        .isInstanceOf(ConsumerHandshake.RefusedFrameException.class)
        .hasMessageContaining("did not prove the deployment's secret");
    assertThat(replaying.received).hasSize(1);
  }

  @Test
  void producerWithAnotherSecretIsRefusedBeforeDSendsItsRequest() {
    Relay relay = new Relay(producer(OTHER));

    assertThatThrownBy(() -> consume(relay, SECRET))
        .isInstanceOf(ConsumerHandshake.RefusedFrameException.class)
        .hasMessageContaining("did not prove the deployment's secret");
    assertThat(relay.toP).hasSize(1);
    assertThat(decided).hasValue(0);
  }

  @Test
  void requestReplayedOnAFreshConnectionDoesNotOpenAndIsCounted() throws Exception {
    ProducerHandshake producer = producer(SECRET);
    Relay first = new Relay(producer);
    consume(first, SECRET);
    byte[] capturedChallenge = first.toP.get(0);
    byte[] capturedRequest = first.toP.get(1);

    HandshakeChannel.Conversation replayed = producer.open();
    replayed.greeting();
    replayed.reply(capturedChallenge);
    HandshakeChannel.Reply answer = replayed.reply(capturedRequest);

    assertThat(answer.last()).isTrue();
    assertThat(answer.proven()).isFalse();
    assertThat(answer.served()).isFalse();
    assertThat(Handshake.decodeResponse(answer.frame()))
        .isInstanceOf(Handshake.Refused.class)
        .extracting(r -> ((Handshake.Refused) r).reason())
        .asString()
        .startsWith("handshake not authenticated: the request was not sealed");
    assertThat(decided).hasValue(1);
    assertThat(refused).singleElement().asString().startsWith("unauthenticated: ");
  }

  @Test
  void requestReflectedBackToDAsItsAnswerDoesNotOpen() {
    Relay reflecting =
        new Relay(producer(SECRET), (toD, sentByD) -> Handshake.isSealed(sentByD) ? sentByD : toD);

    assertThatThrownBy(() -> consume(reflecting, SECRET))
        .isInstanceOf(ConsumerHandshake.RefusedFrameException.class)
        .hasMessageContaining("the producer's answer does not open");
  }

  @Test
  void answerChangedOnTheWayDoesNotOpen() {
    Relay tampering =
        new Relay(
            producer(SECRET),
            (toD, sentByD) -> {
              if (Handshake.isSealed(toD)) {
                byte[] changed = toD.clone();
                changed[changed.length - 20] ^= 1;
                return changed;
              }
              return toD;
            });

    assertThatThrownBy(() -> consume(tampering, SECRET))
        .isInstanceOf(ConsumerHandshake.RefusedFrameException.class)
        .hasMessageContaining("the producer's answer does not open");
  }

  @Test
  void plainRequestToAProducerWithTheSecretIsRefusedUnheardAndCounted() {
    HandshakeChannel.Conversation conversation = producer(SECRET).open();
    conversation.greeting();

    HandshakeChannel.Reply reply = conversation.reply(Handshake.encode(REQUEST));

    assertThat(reply.last()).isTrue();
    assertThat(reply.proven()).isFalse();
    assertThat(new String(reply.frame(), US_ASCII))
        .contains("handshake not authenticated")
        .contains("kvbridge.handshake.secret");
    assertThat(decided).hasValue(0);
    assertThat(refused).singleElement().asString().startsWith("unauthenticated: ");
  }

  @Test
  void consumerWithoutTheSecretSendsNothingToAProducerThatRequiresIt() {
    Relay relay = new Relay(producer(SECRET));

    assertThatThrownBy(() -> consume(relay, Optional.empty()))
        .isInstanceOf(ConsumerHandshake.RefusedFrameException.class)
        .hasMessageContaining("requires the deployment's secret and this consumer has none")
        .hasMessageContaining("kvbridge.handshake.secret");
    assertThat(relay.toP).isEmpty();
  }

  @Test
  void consumerWithTheSecretRefusesAProducerThatDoesNotRequireIt() {
    Relay relay = new Relay(producer(Optional.empty()));

    assertThatThrownBy(() -> consume(relay, SECRET))
        .isInstanceOf(ConsumerHandshake.RefusedFrameException.class)
        .hasMessageContaining("does not authenticate handshakes");
    assertThat(relay.toP).isEmpty();
  }

  @Test
  void malformedRequestWithoutASecretIsRefusedAndCounted() {
    HandshakeChannel.Conversation conversation = producer(Optional.empty()).open();
    conversation.greeting();

    HandshakeChannel.Reply reply = conversation.reply(new byte[] {1, 2, 3});

    assertThat(reply.last()).isTrue();
    assertThat(reply.proven()).isFalse();
    assertThat(refused).singleElement().asString().startsWith("malformed: ");
    assertThat(decided).hasValue(0);
  }

  @Test
  void refusalTheDecisionMakesTravelsSealedAndEndsUnserved() throws Exception {
    ProducerHandshake refusing =
        new ProducerHandshake(
            SECRET,
            request -> new Handshake.Refused("incompatible KV layout: model differs"),
            ProducerHandshake.Listener.NONE);
    Relay relay = new Relay(refusing);

    ConsumerHandshake.Outcome outcome = consume(relay, SECRET);

    assertThat(outcome.response())
        .isEqualTo(new Handshake.Refused("incompatible KV layout: model differs"));
    assertThat(Handshake.isSealed(relay.toD.get(2))).isTrue();
  }

  // ---------------------------------------------------------------- helpers

  private static boolean contains(byte[] haystack, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= haystack.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (haystack[i + j] != needle[j]) {
          continue outer;
        }
      }
      return true;
    }
    return false;
  }

  /** A channel that only holds conversations, as a consumer does; it serves nothing. */
  private abstract static class ClientOnly implements HandshakeChannel {
    @Override
    public Server serve(HandshakeAddress requestedAddress, String engineId, Responder responder) {
      throw new UnsupportedOperationException("a consumer's channel serves nothing");
    }
  }

  /** What a relay does to a frame on its way to D, given the last frame D sent. */
  private interface Rewrite {
    byte[] toD(byte[] frame, byte[] lastFromD);
  }

  /**
   * A channel that passes every frame between D and a producer's conversation, recording them, and
   * may rewrite what goes to D.
   */
  private static final class Relay extends ClientOnly {
    final List<byte[]> toP = new ArrayList<>();
    final List<byte[]> toD = new ArrayList<>();
    private final ProducerHandshake producer;
    private final Rewrite rewrite;

    Relay(ProducerHandshake producer) {
      this(producer, (frame, lastFromD) -> frame);
    }

    Relay(ProducerHandshake producer, Rewrite rewrite) {
      this.producer = producer;
      this.rewrite = rewrite;
    }

    List<byte[]> all() {
      List<byte[]> all = new ArrayList<>(toD);
      all.addAll(toP);
      return all;
    }

    @Override
    public byte[] converse(HandshakeAddress address, Dialogue dialogue, Duration deadline)
        throws IOException {
      Conversation conversation = producer.open();
      byte[] received = conversation.greeting();
      toD.add(received);
      byte[] lastFromD = new byte[0];
      while (true) {
        Optional<byte[]> next = dialogue.next(received);
        if (next.isEmpty()) {
          return received;
        }
        lastFromD = next.get();
        toP.add(lastFromD);
        Reply reply = conversation.reply(lastFromD);
        received = rewrite.toD(reply.frame(), lastFromD);
        toD.add(received);
        if (reply.last()) {
          dialogue.next(received);
          return received;
        }
      }
    }
  }

  /**
   * A channel whose "producer" greets as a real one would and answers the challenge with a set
   * proof.
   */
  private static final class Impostor extends ClientOnly {
    final List<byte[]> received = new ArrayList<>();
    private final byte[] proof;

    Impostor(byte[] proof) {
      this.proof = proof;
    }

    @Override
    public byte[] converse(HandshakeAddress address, Dialogue dialogue, Duration deadline)
        throws IOException {
      byte[] answer = Handshake.encode(Handshake.Greeting.fresh(true));
      for (UnaryOperator<byte[]> step :
          List.<UnaryOperator<byte[]>>of(sent -> proof, sent -> sent)) {
        Optional<byte[]> next = dialogue.next(answer);
        if (next.isEmpty()) {
          return answer;
        }
        received.add(next.get());
        answer = step.apply(next.get());
      }
      return answer;
    }
  }
}
