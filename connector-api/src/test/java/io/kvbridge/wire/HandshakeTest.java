package io.kvbridge.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.transfer.MemoryKind;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class HandshakeTest {

  private static final Optional<HandshakeSecret> NONE = Optional.empty();
  private static final Optional<HandshakeSecret> SECRET =
      Optional.of(HandshakeSecret.of("a deployment secret of some length"));

  private static final KvLayout LAYOUT =
      new KvLayout(
          "llama-3-8b@1", 2, 32, 2, 8, 0, 8, 128, 16, 4096, KvLayout.MemoryOrder.HEAD_MAJOR);

  private final Handshake.Greeting greeting = Handshake.Greeting.fresh(false);
  private final Handshake.Request request =
      new Handshake.Request(
          Handshake.randomNonce(),
          "decode-0",
          0x1234L,
          List.of(LAYOUT.forRank(0, 2), LAYOUT.forRank(1, 2)),
          new byte[] {0, 1, 0, 2, (byte) 0xff});
  private final Handshake.Accepted accepted =
      new Handshake.Accepted(
          "prefill-0",
          0x5678L,
          123L,
          List.of(
              new Handshake.Rank(
                  LAYOUT, 0x7f00_0000_0000L, 0, MemoryKind.VRAM, new byte[] {7, 0, 7})));

  @Test
  void greetingSurvivesEncodeAndDecode() throws Exception {
    Handshake.Greeting authenticated = Handshake.Greeting.fresh(true);

    assertThat(Handshake.decodeGreeting(Handshake.encode(authenticated))).isEqualTo(authenticated);
  }

  @Test
  void requestSurvivesEncodeAndDecodeWithBinaryMetadata() throws Exception {
    Handshake.Request decoded =
        Handshake.decodeRequest(Handshake.encode(request, greeting, NONE), greeting, NONE);

    assertThat(decoded).isEqualTo(request);
    assertThat(decoded.consumerMetadata()).containsExactly(0, 1, 0, 2, 0xff);
    assertThat(decoded.consumerIncarnation()).isEqualTo(0x1234L);
  }

  @Test
  void acceptedResponseSurvivesEncodeAndDecode() throws Exception {
    Handshake.Response decoded =
        Handshake.decodeResponse(
            Handshake.encode(accepted, greeting, request, NONE), greeting, request, NONE);

    assertThat(decoded).isEqualTo(accepted);
  }

  @Test
  void refusalCarriesItsReason() throws Exception {
    Handshake.Response decoded =
        Handshake.decodeResponse(
            Handshake.encode(new Handshake.Refused("incompatible")), greeting, request, SECRET);

    assertThat(decoded).isEqualTo(new Handshake.Refused("incompatible"));
  }

  @Test
  void responseWithAnInvalidLayoutIsRefused() {
    byte[] bytes = Handshake.encode(accepted, greeting, request, NONE);
    // The first rank's layout starts after the engine id, incarnation, clock sample and rank count;
    // its tokens_per_block follows the model name and seven small fields.
    int layoutAt = indexOf(bytes, "llama-3-8b@1".getBytes(StandardCharsets.UTF_8)) - 2;
    int tokensPerBlockAt = layoutAt + 2 + 12 + 1 + 2 + 1 + 2 + 2 + 2 + 2;
    Arrays.fill(bytes, tokensPerBlockAt, tokensPerBlockAt + 4, (byte) 0);

    assertThatThrownBy(() -> Handshake.decodeResponse(bytes, greeting, request, NONE))
        .isInstanceOf(MalformedMessageException.class)
        .hasMessageContaining("tokens_per_block");
  }

  @Test
  void metadataLengthBeyondTheFrameIsRefused() {
    byte[] bytes = Handshake.encode(request, greeting, NONE);

    assertThatThrownBy(
            () -> Handshake.decodeRequest(Arrays.copyOf(bytes, bytes.length - 5), greeting, NONE))
        .isInstanceOf(MalformedMessageException.class);
  }

  // ---------------------------------------------------------------- authentication

  @Test
  void authenticatedRequestAndAnswerPassBothChecks() throws Exception {
    Handshake.Greeting challenge = Handshake.Greeting.fresh(true);

    Handshake.Request decoded =
        Handshake.decodeRequest(Handshake.encode(request, challenge, SECRET), challenge, SECRET);
    Handshake.Response answer =
        Handshake.decodeResponse(
            Handshake.encode(accepted, challenge, request, SECRET), challenge, request, SECRET);

    assertThat(decoded).isEqualTo(request);
    assertThat(answer).isEqualTo(accepted);
  }

  @Test
  void requestWithoutAMacIsRefusedWhereTheSecretIsRequired() {
    Handshake.Greeting challenge = Handshake.Greeting.fresh(true);
    byte[] unauthenticated = Handshake.encode(request, challenge, NONE);

    assertThatThrownBy(() -> Handshake.decodeRequest(unauthenticated, challenge, SECRET))
        .isInstanceOf(HandshakeAuthenticationException.class)
        .hasMessageContaining("carries no MAC");
  }

  @Test
  void requestMadeWithAnotherSecretIsRefused() {
    Handshake.Greeting challenge = Handshake.Greeting.fresh(true);
    byte[] forged =
        Handshake.encode(
            request, challenge, Optional.of(HandshakeSecret.of("another secret, also long")));

    assertThatThrownBy(() -> Handshake.decodeRequest(forged, challenge, SECRET))
        .isInstanceOf(HandshakeAuthenticationException.class);
  }

  @Test
  void requestReplayedAgainstAFreshChallengeIsRefused() {
    Handshake.Greeting first = Handshake.Greeting.fresh(true);
    byte[] captured = Handshake.encode(request, first, SECRET);

    Handshake.Greeting second = Handshake.Greeting.fresh(true);

    assertThatThrownBy(() -> Handshake.decodeRequest(captured, second, SECRET))
        .isInstanceOf(HandshakeAuthenticationException.class);
  }

  @Test
  void requestCopiedUnderAnotherConsumerIdIsRefused() {
    Handshake.Greeting challenge = Handshake.Greeting.fresh(true);
    byte[] genuine = Handshake.encode(request, challenge, SECRET);
    byte[] renamed = replace(genuine, "decode-0", "decode-9");

    assertThatThrownBy(() -> Handshake.decodeRequest(renamed, challenge, SECRET))
        .isInstanceOf(HandshakeAuthenticationException.class);
  }

  @Test
  void answerWithoutAMacIsRefusedByAConsumerWithTheSecret() {
    Handshake.Greeting challenge = Handshake.Greeting.fresh(true);
    byte[] unauthenticated = Handshake.encode(accepted, challenge, request, NONE);

    assertThatThrownBy(() -> Handshake.decodeResponse(unauthenticated, challenge, request, SECRET))
        .isInstanceOf(HandshakeAuthenticationException.class)
        .hasMessageContaining("without a MAC");
  }

  @Test
  void secretIsNeverPrinted() {
    assertThat(SECRET.orElseThrow().toString()).doesNotContain("deployment");
  }

  @Test
  void shortSecretIsRefusedWithoutQuotingIt() {
    assertThatThrownBy(() -> HandshakeSecret.of("hunter2"))
        .hasMessageContaining("at least " + HandshakeSecret.MIN_BYTES)
        .hasMessageNotContaining("hunter2");
  }

  private static byte[] replace(byte[] frame, String from, String to) {
    byte[] a = from.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    byte[] b = to.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    byte[] out = frame.clone();
    for (int i = 0; i + a.length <= out.length; i++) {
      if (Arrays.equals(Arrays.copyOfRange(out, i, i + a.length), a)) {
        System.arraycopy(b, 0, out, i, b.length);
        return out;
      }
    }
    throw new AssertionError(from + " is not in the frame");
  }

  private static int indexOf(byte[] haystack, byte[] needle) {
    for (int i = 0; i + needle.length <= haystack.length; i++) {
      if (Arrays.equals(haystack, i, i + needle.length, needle, 0, needle.length)) {
        return i;
      }
    }
    throw new AssertionError("not found");
  }
}
