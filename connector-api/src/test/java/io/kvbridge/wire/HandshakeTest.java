package io.kvbridge.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.net.HandshakeSecret;
import io.kvbridge.transfer.MemoryKind;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
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
                  LAYOUT, List.of(0x7f00_0000_0000L), 0, MemoryKind.VRAM, new byte[] {7, 0, 7})));

  @Test
  void greetingSurvivesEncodeAndDecode() throws Exception {
    Handshake.Greeting authenticated = Handshake.Greeting.fresh(true);

    assertThat(Handshake.decodeGreeting(Handshake.encode(authenticated))).isEqualTo(authenticated);
  }

  @Test
  void requestSurvivesEncodeAndDecodeWithBinaryMetadata() throws Exception {
    Handshake.Request decoded = Handshake.decodeRequest(Handshake.encode(request));

    assertThat(decoded).isEqualTo(request);
    assertThat(decoded.consumerMetadata()).containsExactly(0, 1, 0, 2, 0xff);
    assertThat(decoded.consumerIncarnation()).isEqualTo(0x1234L);
  }

  @Test
  void acceptedResponseSurvivesEncodeAndDecode() throws Exception {
    Handshake.Response decoded = Handshake.decodeResponse(Handshake.encode(accepted));

    assertThat(decoded).isEqualTo(accepted);
  }

  @Test
  void refusalCarriesItsReason() throws Exception {
    Handshake.Response decoded =
        Handshake.decodeResponse(Handshake.encode(new Handshake.Refused("incompatible")));

    assertThat(decoded).isEqualTo(new Handshake.Refused("incompatible"));
  }

  @Test
  void responseWithAnInvalidLayoutIsRefused() {
    byte[] bytes = Handshake.encode(accepted);
    // The first rank's layout starts after the engine id, incarnation, clock sample and rank count;
    // its tokens_per_block follows the model name and seven small fields.
    int layoutAt = indexOf(bytes, "llama-3-8b@1".getBytes(StandardCharsets.UTF_8)) - 2;
    int tokensPerBlockAt = layoutAt + 2 + 12 + 1 + 2 + 1 + 2 + 2 + 2 + 2;
    Arrays.fill(bytes, tokensPerBlockAt, tokensPerBlockAt + 4, (byte) 0);

    assertThatThrownBy(() -> Handshake.decodeResponse(bytes))
        .isInstanceOf(MalformedMessageException.class)
        .hasMessageContaining("tokens_per_block");
  }

  @Test
  void metadataLengthBeyondTheFrameIsRefused() {
    byte[] bytes = Handshake.encode(request);

    assertThatThrownBy(() -> Handshake.decodeRequest(Arrays.copyOf(bytes, bytes.length - 5)))
        .isInstanceOf(MalformedMessageException.class);
  }

  // ---------------------------------------------------------------- authentication

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

  // ---------------------------------------------------------------- frames refused

  @Test
  void greetingWithATrailingByteIsRefused() {
    byte[] bytes = Handshake.encode(greeting);

    assertThatThrownBy(() -> Handshake.decodeGreeting(Arrays.copyOf(bytes, bytes.length + 1)))
        .isInstanceOf(MalformedMessageException.class)
        .hasMessage("1 unexpected trailing bytes");
  }

  @Test
  void refusalWithATrailingByteIsRefused() {
    byte[] bytes = Handshake.encode(new Handshake.Refused("incompatible"));

    assertThatThrownBy(() -> Handshake.decodeResponse(Arrays.copyOf(bytes, bytes.length + 1)))
        .isInstanceOf(MalformedMessageException.class)
        .hasMessage("1 unexpected trailing bytes");
  }

  @Test
  void requestWithATrailingByteIsRefused() {
    byte[] bytes = Handshake.encode(request);

    assertThatThrownBy(() -> Handshake.decodeRequest(Arrays.copyOf(bytes, bytes.length + 1)))
        .isInstanceOf(MalformedMessageException.class)
        .hasMessage("1 unexpected trailing bytes");
  }

  @Test
  void acceptanceWithATrailingByteIsRefused() {
    byte[] bytes = Handshake.encode(accepted);

    assertThatThrownBy(() -> Handshake.decodeResponse(Arrays.copyOf(bytes, bytes.length + 1)))
        .isInstanceOf(MalformedMessageException.class)
        .hasMessage("1 unexpected trailing bytes");
  }

  @Test
  void memoryKindPastTheLastKnownIsRefused() {
    byte[] bytes = Handshake.encode(accepted);
    bytes[memoryKindAt(bytes)] = (byte) MemoryKind.values().length;

    assertThatThrownBy(() -> Handshake.decodeResponse(bytes))
        .isInstanceOf(MalformedMessageException.class)
        .hasMessage("unknown memory kind " + MemoryKind.values().length);
  }

  @Test
  void everyMemoryKindSurvivesEncodeAndDecode() throws Exception {
    for (MemoryKind kind : MemoryKind.values()) {
      Handshake.Accepted in =
          new Handshake.Accepted(
              "prefill-0",
              1L,
              2L,
              List.of(new Handshake.Rank(LAYOUT, List.of(0L), 0, kind, new byte[0])));

      assertThat(Handshake.decodeResponse(Handshake.encode(in))).isEqualTo(in);
    }
  }

  @Test
  void refusalEncodedAsAResponseDecodesAsTheRefusal() throws Exception {
    Handshake.Response refused = new Handshake.Refused("draining");

    assertThat(Handshake.decodeResponse(Handshake.encode(refused))).isEqualTo(refused);
  }

  @Test
  void greetingOfAnotherTypeIsRefused() {
    byte[] bytes = Handshake.encode(new Handshake.Refused("x"));

    assertThatThrownBy(() -> Handshake.decodeGreeting(bytes))
        .hasMessage("expected a handshake greeting, got type 3");
  }

  @Test
  void greetingWithUnknownFlagsIsRefused() {
    byte[] bytes = Handshake.encode(greeting);
    bytes[bytes.length - 1] = 2;

    assertThatThrownBy(() -> Handshake.decodeGreeting(bytes))
        .hasMessage("unknown greeting flags 2");
  }

  // ---------------------------------------------------------------- ranks

  @Test
  void requestMayNameTheMostRanks() throws Exception {
    Handshake.Request most =
        new Handshake.Request(
            "decode-0", 1L, Collections.nCopies(Handshake.MAX_RANKS, LAYOUT), new byte[0]);

    assertThat(Handshake.decodeRequest(Handshake.encode(most))).isEqualTo(most);
  }

  @Test
  void requestWithOneRankTooManyIsRefusedNamingTheRanks() {
    assertThatIllegalArgumentException()
        .isThrownBy(
            () ->
                new Handshake.Request(
                    "decode-0",
                    1L,
                    Collections.nCopies(Handshake.MAX_RANKS + 1, LAYOUT),
                    new byte[0]))
        .withMessage("an engine has 1 to 255 ranks, got 256");
  }

  @Test
  void requestWithoutRanksIsRefusedNamingTheRanks() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> new Handshake.Request("decode-0", 1L, List.of(), new byte[0]))
        .withMessage("an engine has 1 to 255 ranks, got 0");
  }

  @Test
  void acceptanceMayNameTheMostRanks() throws Exception {
    Handshake.Rank rank =
        new Handshake.Rank(LAYOUT, List.of(0x1000L), 1, MemoryKind.DRAM, new byte[] {1});
    Handshake.Accepted most =
        new Handshake.Accepted("prefill-0", 1L, 2L, Collections.nCopies(Handshake.MAX_RANKS, rank));

    assertThat(Handshake.decodeResponse(Handshake.encode(most))).isEqualTo(most);
  }

  @Test
  void acceptanceWithOneRankTooManyIsRefusedNamingTheRanks() {
    Handshake.Rank rank =
        new Handshake.Rank(LAYOUT, List.of(0x1000L), 1, MemoryKind.DRAM, new byte[] {1});

    assertThatIllegalArgumentException()
        .isThrownBy(
            () ->
                new Handshake.Accepted(
                    "prefill-0", 1L, 2L, Collections.nCopies(Handshake.MAX_RANKS + 1, rank)))
        .withMessage("a producer has 1 to 255 ranks, got 256");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> new Handshake.Accepted("prefill-0", 1L, 2L, List.of()))
        .withMessage("a producer has 1 to 255 ranks, got 0");
  }

  @Test
  void rankWithANegativeDeviceIsRefusedNamingTheDevice() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> new Handshake.Rank(LAYOUT, List.of(0L), -1, MemoryKind.VRAM, new byte[0]))
        .withMessage("a device id is at least 0, got -1");
  }

  @Test
  void nonceOfAnotherLengthIsRefusedNamingTheNonce() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> new Handshake.Greeting(new byte[Handshake.NONCE_BYTES - 1], false))
        .withMessage("a nonce is 16 bytes, got 15");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> new Handshake.Challenge(new byte[Handshake.NONCE_BYTES + 1]))
        .withMessage("a nonce is 16 bytes, got 17");
  }

  // ---------------------------------------------------------------- values

  @Test
  void recordsCopyTheirArraysInAndOut() {
    byte[] nonce = nonce(1);
    byte[] metadata = {1, 2};
    Handshake.Greeting g = new Handshake.Greeting(nonce, false);
    Handshake.Challenge c = new Handshake.Challenge(nonce);
    Handshake.Request r = new Handshake.Request("decode-0", 1L, List.of(LAYOUT), metadata);
    Handshake.Rank rank = new Handshake.Rank(LAYOUT, List.of(0L), 0, MemoryKind.VRAM, metadata);
    nonce[0] = 9;
    metadata[0] = 9;
    g.nonce()[1] = 9;
    c.nonce()[1] = 9;
    r.consumerMetadata()[1] = 9;
    rank.metadata()[1] = 9;

    assertThat(g.nonce()).isEqualTo(nonce(1));
    assertThat(c.nonce()).isEqualTo(nonce(1));
    assertThat(r.consumerMetadata()).containsExactly(1, 2);
    assertThat(rank.metadata()).containsExactly(1, 2);
  }

  @Test
  void greetingsAreEqualByNonceAndFlag() {
    Handshake.Greeting g = new Handshake.Greeting(nonce(1), true);

    assertThat(g)
        .isEqualTo(new Handshake.Greeting(nonce(1), true))
        .hasSameHashCodeAs(new Handshake.Greeting(nonce(1), true));
    assertThat(g).isNotEqualTo(new Handshake.Greeting(nonce(2), true));
    assertThat(g).isNotEqualTo(new Handshake.Greeting(nonce(1), false));
    assertThat(g).isNotEqualTo("a greeting");
    assertThat(g.hashCode())
        .isNotEqualTo(new Handshake.Greeting(nonce(2), true).hashCode())
        .isNotEqualTo(new Handshake.Greeting(nonce(1), false).hashCode());
  }

  @Test
  void requestsAreEqualByEveryField() {
    Handshake.Request r = request("decode-0", 1L, List.of(LAYOUT), new byte[] {1});

    assertThat(r)
        .isEqualTo(request("decode-0", 1L, List.of(LAYOUT), new byte[] {1}))
        .hasSameHashCodeAs(request("decode-0", 1L, List.of(LAYOUT), new byte[] {1}));
    assertThat(r).isNotEqualTo(request("decode-1", 1L, List.of(LAYOUT), new byte[] {1}));
    assertThat(r).isNotEqualTo(request("decode-0", 2L, List.of(LAYOUT), new byte[] {1}));
    assertThat(r).isNotEqualTo(request("decode-0", 1L, List.of(LAYOUT, LAYOUT), new byte[] {1}));
    assertThat(r).isNotEqualTo(request("decode-0", 1L, List.of(LAYOUT), new byte[] {2}));
    assertThat(r).isNotEqualTo("a request");
  }

  @Test
  void requestsOfNeighbouringEnginesHashApart() {
    Handshake.Request r = request("decode-0", 1L, List.of(LAYOUT), new byte[0]);

    assertThat(r.hashCode())
        .isNotEqualTo(request("decode-1", 1L, List.of(LAYOUT), new byte[0]).hashCode())
        .isNotEqualTo(request("decode-0", 2L, List.of(LAYOUT), new byte[0]).hashCode());
  }

  @Test
  void ranksAreEqualByEveryField() {
    Handshake.Rank rank =
        new Handshake.Rank(LAYOUT, List.of(16L), 0, MemoryKind.VRAM, new byte[] {1});

    assertThat(rank)
        .isEqualTo(new Handshake.Rank(LAYOUT, List.of(16L), 0, MemoryKind.VRAM, new byte[] {1}))
        .hasSameHashCodeAs(
            new Handshake.Rank(LAYOUT, List.of(16L), 0, MemoryKind.VRAM, new byte[] {1}));
    assertThat(rank)
        .isNotEqualTo(
            new Handshake.Rank(
                LAYOUT.forRank(0, 2), List.of(16L), 0, MemoryKind.VRAM, new byte[] {1}));
    assertThat(rank)
        .isNotEqualTo(new Handshake.Rank(LAYOUT, List.of(32L), 0, MemoryKind.VRAM, new byte[] {1}));
    assertThat(rank)
        .isNotEqualTo(new Handshake.Rank(LAYOUT, List.of(16L), 1, MemoryKind.VRAM, new byte[] {1}));
    assertThat(rank)
        .isNotEqualTo(new Handshake.Rank(LAYOUT, List.of(16L), 0, MemoryKind.DRAM, new byte[] {1}));
    assertThat(rank)
        .isNotEqualTo(new Handshake.Rank(LAYOUT, List.of(16L), 0, MemoryKind.VRAM, new byte[] {2}));
    assertThat(rank).isNotEqualTo("a rank");
    assertThat(rank.hashCode())
        .isNotEqualTo(
            new Handshake.Rank(LAYOUT, List.of(32L), 0, MemoryKind.VRAM, new byte[] {1})
                .hashCode());
  }

  @Test
  void printedValuesAreShortAndNeverShowMetadata() {
    Handshake.Greeting g = new Handshake.Greeting(nonce(0xab), true);

    assertThat(g).hasToString("Greeting[" + "ab".repeat(16) + ", auth=true]");
    assertThat(request("decode-0", 0x1234L, List.of(LAYOUT), new byte[] {1}))
        .hasToString("Request[decode-0#1234]");
    assertThat(accepted).hasToString("Accepted[prefill-0#5678]");
    assertThat(accepted.ranks().get(0)).hasToString("Rank[heads 0+8 at 0x7f0000000000]");
  }

  private static Handshake.Request request(
      String engineId, long incarnation, List<KvLayout> ranks, byte[] metadata) {
    return new Handshake.Request(engineId, incarnation, ranks, metadata);
  }

  private static byte[] nonce(int fill) {
    byte[] nonce = new byte[Handshake.NONCE_BYTES];
    Arrays.fill(nonce, (byte) fill);
    return nonce;
  }

  /**
   * Where the single rank's memory kind is in an acceptance: it ends with the kind, then the
   * metadata's length and bytes.
   */
  private int memoryKindAt(byte[] acceptance) {
    int metadataLength = accepted.ranks().get(0).metadata().length;
    return acceptance.length - metadataLength - Integer.BYTES - 1;
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
