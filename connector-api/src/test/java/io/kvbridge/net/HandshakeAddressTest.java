package io.kvbridge.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.kvbridge.wire.HandshakeChannel;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class HandshakeAddressTest {

  @Test
  void plainLocalIsALocalAddressWithoutAName() {
    assertThat(HandshakeAddress.parse("local"))
        .isEqualTo(new HandshakeAddress.Local(Optional.empty()));
  }

  @Test
  void localWithANameKeepsTheName() {
    assertThat(HandshakeAddress.parse("local://prefill-0"))
        .isEqualTo(HandshakeAddress.Local.named("prefill-0"));
  }

  @Test
  void tcpAddressHasAHostAndAPort() {
    assertThat(HandshakeAddress.parse("tcp://10.0.0.7:9000"))
        .isEqualTo(new HandshakeAddress.Tcp("10.0.0.7", 9000));
  }

  @Test
  void ipv6HostIsHeldWithoutBracketsAndWrittenWithThem() {
    HandshakeAddress address = HandshakeAddress.parse("tcp://[::1]:0");

    assertThat(address).isEqualTo(new HandshakeAddress.Tcp("::1", 0));
    assertThat(address).hasToString("tcp://[::1]:0");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"local", "local://decode-3", "tcp://127.0.0.1:0", "tcp://node-7.example:65535"})
  void writtenFormParsesBackToTheSameAddress(String text) {
    HandshakeAddress address = HandshakeAddress.parse(text);

    assertThat(address).hasToString(text);
    assertThat(HandshakeAddress.parse(address.toString())).isEqualTo(address);
  }

  @Test
  void anUnsupportedSchemeIsRefusedNamingTheAcceptedForms() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> HandshakeAddress.parse("udp://x:1"))
        .withMessage(
            "'udp://x:1' is not an address; use 'local' or 'local://name' (engines in one JVM) or"
                + " 'tcp://host:port' (port 0 picks a free one when serving)");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "tcp://host",
        "tcp://host:",
        "tcp://:80",
        "tcp://host:65536",
        "tcp://host:80/path",
        "tcp://user@host:80",
        "tcp://host:80?q",
        "local://",
        "local:// ",
        "LOCAL",
        ""
      })
  void malformedAddressesAreRefused(String text) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> HandshakeAddress.parse(text))
        .withMessageStartingWith("'" + text + "' is not an address");
  }

  @Test
  void aLongValueIsShortenedInTheMessage() {
    String text = "tcp://" + "h".repeat(300);

    assertThatIllegalArgumentException()
        .isThrownBy(() -> HandshakeAddress.parse(text))
        .withMessageStartingWith("'" + text.substring(0, 64) + "…' is not an address");
  }

  @Test
  void valueOfSixtyFourCharactersIsShownWhole() {
    String text = "tcp://" + "h".repeat(58);

    assertThat(text).hasSize(64);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> HandshakeAddress.parse(text))
        .withMessageStartingWith("'" + text + "' is not an address");
  }

  @Test
  void channelIsChosenByTheKindOfAddress() {
    assertThat(HandshakeChannel.forAddress(HandshakeAddress.parse("local")).mayBlock()).isFalse();
    assertThat(HandshakeChannel.forAddress(HandshakeAddress.parse("tcp://127.0.0.1:0")).mayBlock())
        .isTrue();
  }
}
