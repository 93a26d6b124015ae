package io.kvbridge.tck.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.wire.Handshake;
import io.kvbridge.wire.ProtocolMessage;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The wire format against its golden vectors, both ways: each value encodes to exactly its vector's
 * bytes, and each vector decodes to exactly its value.
 */
class GoldenVectorsTest {

  private final Map<String, byte[]> vectors = GoldenVectors.load();

  @TestFactory
  Iterable<DynamicTest> everyMessageEncodesToItsVector() {
    return GoldenValues.messages().entrySet().stream()
        .map(
            e ->
                DynamicTest.dynamicTest(
                    e.getKey(),
                    () ->
                        assertThat(hex(ProtocolMessage.encode(e.getValue())))
                            .isEqualTo(hex(vector(e.getKey())))))
        .toList();
  }

  @TestFactory
  Iterable<DynamicTest> everyMessageVectorDecodesToItsValue() {
    return GoldenValues.messages().entrySet().stream()
        .map(
            e ->
                DynamicTest.dynamicTest(
                    e.getKey(),
                    () ->
                        assertThat(ProtocolMessage.decode(vector(e.getKey())))
                            .isEqualTo(e.getValue())))
        .toList();
  }

  @TestFactory
  Iterable<DynamicTest> everyHandshakeFrameEncodesToItsVector() {
    return GoldenValues.handshakeFrames().entrySet().stream()
        .map(
            e ->
                DynamicTest.dynamicTest(
                    e.getKey(),
                    () -> assertThat(hex(e.getValue())).isEqualTo(hex(vector(e.getKey())))))
        .toList();
  }

  @Test
  void handshakeVectorsDecodeToTheirValues() throws Exception {
    Optional<io.kvbridge.wire.HandshakeSecret> none = Optional.empty();
    Optional<io.kvbridge.wire.HandshakeSecret> secret = Optional.of(GoldenValues.SECRET);
    Handshake.Greeting plain = GoldenValues.GREETING;
    Handshake.Greeting challenge = GoldenValues.GREETING_AUTHENTICATED;

    assertThat(Handshake.decodeGreeting(vector("handshake.greeting"))).isEqualTo(plain);
    assertThat(Handshake.decodeGreeting(vector("handshake.greeting.authenticated")))
        .isEqualTo(challenge);
    assertThat(Handshake.decodeRequest(vector("handshake.request"), plain, none))
        .isEqualTo(GoldenValues.REQUEST);
    assertThat(
            Handshake.decodeRequest(vector("handshake.request.authenticated"), challenge, secret))
        .isEqualTo(GoldenValues.REQUEST);
    assertThat(
            Handshake.decodeResponse(
                vector("handshake.accepted"), plain, GoldenValues.REQUEST, none))
        .isEqualTo(GoldenValues.ACCEPTED);
    assertThat(
            Handshake.decodeResponse(
                vector("handshake.accepted.authenticated"),
                challenge,
                GoldenValues.REQUEST,
                secret))
        .isEqualTo(GoldenValues.ACCEPTED);
    assertThat(
            Handshake.decodeResponse(
                vector("handshake.refused"), plain, GoldenValues.REQUEST, secret))
        .isEqualTo(new Handshake.Refused("incompatible KV layout"));
  }

  @TestFactory
  Iterable<DynamicTest> digestsAndChecksumsMatchTheirVectors() {
    Map<String, byte[]> computed = new java.util.LinkedHashMap<>(GoldenValues.digests());
    computed.putAll(GoldenValues.checksums());
    return computed.entrySet().stream()
        .map(
            e ->
                DynamicTest.dynamicTest(
                    e.getKey(),
                    () -> assertThat(hex(e.getValue())).isEqualTo(hex(vector(e.getKey())))))
        .toList();
  }

  @Test
  void everyVectorHasAValueAndEveryValueAVector() {
    Set<String> names = new HashSet<>(GoldenValues.messages().keySet());
    names.addAll(GoldenValues.handshakeFrames().keySet());
    names.addAll(GoldenValues.digests().keySet());
    names.addAll(GoldenValues.checksums().keySet());

    assertThat(vectors.keySet()).containsExactlyInAnyOrderElementsOf(names);
  }

  private byte[] vector(String name) {
    byte[] bytes = vectors.get(name);
    assertThat(bytes).as("vector %s", name).isNotNull();
    return bytes;
  }

  private static String hex(byte[] bytes) {
    return HexFormat.of().formatHex(bytes);
  }
}
