package io.kvbridge.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.transfer.MemoryKind;
import java.util.Arrays;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class HandshakeTest {

  private static final Optional<HandshakeSecret> NONE = Optional.empty();
  private static final Optional<HandshakeSecret> SECRET =
      Optional.of(HandshakeSecret.of("a deployment secret of some length"));

  private final Handshake.Greeting greeting = Handshake.Greeting.fresh(false);
  private final Handshake.Request request =
      new Handshake.Request(
          Handshake.randomNonce(),
          "decode-0",
          0x1234L,
          "abc",
          new byte[] {0, 1, 0, 2, (byte) 0xff});
  private final Handshake.Accepted accepted =
      new Handshake.Accepted(
          "prefill-0",
          0x5678L,
          new byte[] {7, 0, 7},
          64,
          4096,
          0x7f00_0000_0000L,
          0,
          MemoryKind.VRAM,
          123L);

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
  void responseWithNonPositiveLayoutIsRefused() {
    byte[] bytes =
        Handshake.encode(
            new Handshake.Accepted("p", 1L, new byte[0], 0, 4096, 0, 0, MemoryKind.DRAM, 0),
            greeting,
            request,
            NONE);

    assertThatThrownBy(() -> Handshake.decodeResponse(bytes, greeting, request, NONE))
        .hasMessageContaining("layout");
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
}
