package io.kvbridge.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.kvbridge.wire.HandshakeKeys;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class HandshakeSecretTest {

  @Test
  void secretOfTheShortestLengthIsAccepted() {
    HandshakeSecret secret = HandshakeSecret.of("x".repeat(HandshakeSecret.MIN_BYTES));

    assertThat(List.of(HandshakeKeys.derive(secret, new byte[16], new byte[16]).keys()))
        .allSatisfy(key -> assertThat(key).hasSize(32));
  }

  @Test
  void secretOneByteShorterIsRefusedSayingHowLongItWas() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> HandshakeSecret.of("x".repeat(HandshakeSecret.MIN_BYTES - 1)))
        .withMessage(
            "the handshake secret must be at least "
                + HandshakeSecret.MIN_BYTES
                + " bytes of UTF-8, got "
                + (HandshakeSecret.MIN_BYTES - 1));
  }

  @Test
  void lengthIsCountedInBytesOfUtf8NotCharacters() {
    String eightCharacters = "é".repeat(8);

    assertThat(eightCharacters.getBytes(StandardCharsets.UTF_8)).hasSize(16);
    assertThatCode(() -> HandshakeSecret.of(eightCharacters)).doesNotThrowAnyException();
  }

  @Test
  void keysDependOnTheSecretAndOnBothNonces() {
    HandshakeSecret secret = HandshakeSecret.of("a deployment secret of some length");
    byte[] p = new byte[16];
    byte[] d = new byte[16];
    p[3] = 5;
    d[3] = 7;
    byte[] otherP = p.clone();
    otherP[15] = 1;
    byte[] otherD = d.clone();
    otherD[0] = 1;
    byte[][] keys = HandshakeKeys.derive(secret, p, d).keys();

    assertThat(List.of(HandshakeKeys.derive(secret, p, d).keys())).containsExactly(keys);
    for (HandshakeKeys other :
        List.of(
            HandshakeKeys.derive(secret, otherP, d),
            HandshakeKeys.derive(secret, p, otherD),
            HandshakeKeys.derive(secret, d, p),
            HandshakeKeys.derive(HandshakeSecret.of("another secret of some length"), p, d))) {
      for (int i = 0; i < keys.length; i++) {
        assertThat(other.keys()[i]).isNotEqualTo(keys[i]);
      }
    }
    assertThat(keys[0]).isNotEqualTo(keys[1]).isNotEqualTo(keys[2]);
    assertThat(keys[1]).isNotEqualTo(keys[2]);
  }

  @Test
  void printedSecretSaysItIsRedacted() {
    assertThat(HandshakeSecret.of("a deployment secret of some length"))
        .hasToString("HandshakeSecret[redacted]");
  }
}
