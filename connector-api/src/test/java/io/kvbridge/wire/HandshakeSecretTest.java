package io.kvbridge.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class HandshakeSecretTest {

  @Test
  void secretOfTheShortestLengthIsAccepted() {
    HandshakeSecret secret = HandshakeSecret.of("x".repeat(HandshakeSecret.MIN_BYTES));

    assertThat(secret.mac("d", new byte[] {1})).hasSize(HandshakeSecret.MAC_BYTES);
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
    assertThat(HandshakeSecret.of(eightCharacters)).isNotNull();
  }

  @Test
  void macProvesTheSecretTheDomainAndEveryPart() {
    HandshakeSecret secret = HandshakeSecret.of("a deployment secret of some length");
    byte[] mac = secret.mac("domain", new byte[] {1}, new byte[] {2});

    assertThat(secret.verify(mac, "domain", new byte[] {1}, new byte[] {2})).isTrue();
    assertThat(secret.verify(mac, "other", new byte[] {1}, new byte[] {2})).isFalse();
    assertThat(secret.verify(mac, "domain", new byte[] {1}, new byte[] {3})).isFalse();
    assertThat(
            HandshakeSecret.of("another secret of some length")
                .verify(mac, "domain", new byte[] {1}, new byte[] {2}))
        .isFalse();
  }

  @Test
  void printedSecretSaysItIsRedacted() {
    assertThat(HandshakeSecret.of("a deployment secret of some length"))
        .hasToString("HandshakeSecret[redacted]");
  }
}
