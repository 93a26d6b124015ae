package io.kvbridge.tck.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.wire.Handshake;
import io.kvbridge.wire.HandshakeKeys;
import io.kvbridge.wire.ProtocolMessage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
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
    HandshakeKeys keys = GoldenValues.keys();
    byte[] greeting = vector("handshake.greeting.authenticated");
    byte[] challenge = vector("handshake.challenge");

    assertThat(Handshake.decodeGreeting(vector("handshake.greeting")))
        .isEqualTo(GoldenValues.GREETING);
    assertThat(Handshake.decodeGreeting(greeting)).isEqualTo(GoldenValues.GREETING_AUTHENTICATED);
    assertThat(Handshake.decodeRequest(vector("handshake.request")))
        .isEqualTo(GoldenValues.REQUEST);
    assertThat(Handshake.decodeResponse(vector("handshake.accepted")))
        .isEqualTo(GoldenValues.ACCEPTED);
    assertThat(Handshake.decodeResponse(vector("handshake.accepted.per-layer")))
        .isEqualTo(GoldenValues.ACCEPTED_PER_LAYER);
    assertThat(Handshake.decodeResponse(vector("handshake.refused")))
        .isEqualTo(new Handshake.Refused("incompatible KV layout"));
    assertThat(Handshake.decodeChallenge(challenge)).isEqualTo(GoldenValues.CHALLENGE);
    assertThat(keys.proves(Handshake.decodeProof(vector("handshake.proof")), greeting, challenge))
        .isTrue();
    assertThat(Handshake.decodeRequest(keys.openRequest(vector("handshake.request.sealed"))))
        .isEqualTo(GoldenValues.REQUEST);
    assertThat(Handshake.decodeResponse(keys.openAnswer(vector("handshake.accepted.sealed"))))
        .isEqualTo(GoldenValues.ACCEPTED);
  }

  @TestFactory
  Iterable<DynamicTest> digestsAndChecksumsMatchTheirVectors() {
    Map<String, byte[]> computed = new java.util.LinkedHashMap<>(GoldenValues.digests());
    computed.putAll(GoldenValues.handshakeKeys());
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
    names.addAll(GoldenValues.handshakeKeys().keySet());
    names.addAll(GoldenValues.digests().keySet());
    names.addAll(GoldenValues.checksums().keySet());

    assertThat(vectors.keySet()).containsExactlyInAnyOrderElementsOf(names);
  }

  /**
   * The authenticated conversation's vectors printed in {@code docs/protocol.md} (section
   * "Authentication") are the kit's, so a reader checks a codec offline from the document alone.
   */
  @Test
  void vectorsPrintedInTheSpecificationAreTheKits() throws Exception {
    List<String> lines = Files.readAllLines(Path.of("..", "docs", "protocol.md"));
    int start = lines.indexOf("greeting      " + hex(vector("handshake.greeting.authenticated")));
    assertThat(start).as("the vectors' first line in docs/protocol.md").isPositive();
    Map<String, String> printed = new java.util.LinkedHashMap<>();
    List<String> order = new ArrayList<>();
    for (String line : lines.subList(start, lines.size())) {
      if (line.equals("```")) {
        break;
      }
      String label = line.substring(0, 14).strip();
      String value = line.substring(14).strip();
      if (label.isEmpty()) {
        String last = order.get(order.size() - 1);
        printed.put(last, printed.get(last) + value);
      } else {
        order.add(label + "#" + order.size());
        printed.put(order.get(order.size() - 1), value);
      }
    }

    assertThat(printed.values())
        .containsExactly(
            hex(vector("handshake.greeting.authenticated")),
            hex(vector("handshake.challenge")),
            hex(vector("handshake.key.proof")),
            hex(vector("handshake.key.request")),
            hex(vector("handshake.key.answer")),
            hex(vector("handshake.proof")),
            hex(vector("handshake.request")),
            hex(vector("handshake.request.sealed")),
            hex(vector("handshake.accepted")),
            hex(vector("handshake.accepted.sealed")));
  }

  /**
   * Section "Golden vectors" of {@code docs/protocol.md} prints every vector of the kit, each once,
   * with exactly its bytes, and nothing else: in its fenced blocks, a vector's name on a line of
   * its own, then its hex on indented lines of at most 64 digits.
   */
  @Test
  void everyVectorIsPrintedInTheSpecificationWithItsHex() throws Exception {
    List<String> lines = Files.readAllLines(Path.of("..", "docs", "protocol.md"));
    int start = lines.indexOf("## Golden vectors");
    assertThat(start).as("section Golden vectors in docs/protocol.md").isPositive();
    Map<String, StringBuilder> printed = new java.util.LinkedHashMap<>();
    String current = null;
    boolean fenced = false;
    for (String line : lines.subList(start + 1, lines.size())) {
      if (line.startsWith("## ")) {
        break;
      }
      if (line.startsWith("```")) {
        fenced = !fenced;
        current = null;
        continue;
      }
      if (!fenced) {
        continue;
      }
      if (line.startsWith("    ")) {
        String hex = line.strip();
        assertThat(current).as("a name before the hex line '%s'", line).isNotNull();
        assertThat(hex).as("a line of %s", current).matches("[0-9a-f]{2,64}");
        printed.get(current).append(hex);
      } else {
        current = line.strip();
        assertThat(printed.put(current, new StringBuilder()))
            .as("vector %s printed once", current)
            .isNull();
      }
    }

    assertThat(printed.keySet()).containsExactlyInAnyOrderElementsOf(vectors.keySet());
    printed.forEach(
        (name, hex) -> assertThat(hex.toString()).as(name).isEqualTo(hex(vector(name))));
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
