package io.kvbridge.integrity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.layout.KvLayout.MemoryOrder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The read digest as {@code docs/protocol.md} specifies it ("Read digest"): each expected value is
 * either one of connector-tck's golden vectors or written out here from the protocol's byte
 * encoding, so a field the implementation leaves out or encodes otherwise shows.
 */
class ReadDigestTest {

  // The inputs of connector-tck's golden vectors.
  private static final String GOLDEN_PROMPT =
      "ac50bf92c3d7e4d5fdc3d6a220631bf4777a341e070604c506657645eaad3898";
  private static final KvLayout GOLDEN_PRODUCER =
      new KvLayout("llama-test@1", 2, 2, 2, 4, 0, 4, 8, 4, 64, MemoryOrder.HEAD_MAJOR);
  private static final List<KvLayout> GOLDEN_PRODUCER_RANKS =
      List.of(GOLDEN_PRODUCER.forRank(0, 2), GOLDEN_PRODUCER.forRank(1, 2));
  private static final List<KvLayout> GOLDEN_CONSUMER_RANKS =
      List.of(new KvLayout("llama-test@1", 2, 2, 2, 4, 0, 4, 8, 8, 128, MemoryOrder.HEAD_MAJOR));

  // Inputs whose integers have a different nonzero value in each of their bytes, and a request
  // id longer than 255 bytes of UTF-8, so that each byte of each length and count shows.
  private static final String LONG_ID = "é".repeat(150) + "-7";
  private static final String PROMPT = HexFormat.of().formatHex(sequence(32, 0xa0));
  private static final List<Integer> BLOCKS = List.of(0x0a0b0c0d, 0x7f000001, 5);
  private static final KvLayout MODEL =
      new KvLayout("модель@2", 2, 258, 2, 260, 0, 260, 264, 1, 70_000, MemoryOrder.BLOCK_MAJOR);

  @Test
  void theDigestsOfTheGoldenLeaseAreTheirVectors() {
    byte[] binding = ReadDigest.binding("req-1", GOLDEN_PROMPT, 8, List.of(3, 17));
    byte[] shape = ReadDigest.shape(GOLDEN_PRODUCER_RANKS, GOLDEN_CONSUMER_RANKS);

    assertThat(hex(binding))
        .isEqualTo("5625a8bb0ee43dfcaa2427ddd20019ff9c66ab41bd6aebe34a3b0697a3540307");
    assertThat(hex(shape))
        .isEqualTo("f0a18d5402c3d50f70bd7b409a58ba314ec19ee4caab68738fdc71fe7597361f");
    assertThat(hex(ReadDigest.of(binding, shape, 0).toBytes()))
        .isEqualTo("57041a5738368d6174191133c092bc1bf1243b7b9cfa2a4099d2c167f4f82e1e");
    assertThat(hex(ReadDigest.of(binding, shape, 8).toBytes()))
        .isEqualTo("8cdb83721d30116ef1482adf09e54c0943f657566107affdc6a87f27675387c4");
  }

  @Test
  void theBindingIsSha256OfRequestIdPromptDigestTokensAndBlocksAsTheProtocolEncodesThem()
      throws Exception {
    byte[] id = LONG_ID.getBytes(StandardCharsets.UTF_8);
    assertThat(id.length).isGreaterThan(255);
    ByteBuffer expected = ByteBuffer.allocate(1024);
    expected.put(ascii("kvbridge/lease/2")).putShort((short) id.length).put(id);
    expected.put(HexFormat.of().parseHex(PROMPT)).putInt(0x01020304).putInt(BLOCKS.size());
    BLOCKS.forEach(expected::putInt);

    assertThat(ReadDigest.binding(LONG_ID, PROMPT, 0x01020304, BLOCKS)).isEqualTo(sha256(expected));
  }

  @Test
  void theShapeIsSha256OfEachSidesRankCountAndLayoutsAsTheProtocolEncodesThem() throws Exception {
    List<KvLayout> producer = List.of(MODEL.forRank(0, 2), MODEL.forRank(1, 2));
    List<KvLayout> consumer =
        List.of(
            MODEL
                .withTokensPerBlock(3)
                .withMemory(MemoryOrder.HEAD_MAJOR, KvLayout.Placement.PER_LAYER_PLANE)
                .withBlockCount(0x01020304));
    ByteBuffer expected = ByteBuffer.allocate(1024);
    expected.put(ascii("kvbridge/shape/1")).put((byte) 2);
    producer.forEach(layout -> encode(layout, expected));
    expected.put((byte) 1);
    consumer.forEach(layout -> encode(layout, expected));

    assertThat(ReadDigest.shape(producer, consumer)).isEqualTo(sha256(expected));
  }

  @Test
  void theReadDigestIsSha256OfBindingShapeAndSkippedTokens() throws Exception {
    byte[] binding = sequence(32, 1);
    byte[] shape = sequence(32, 101);
    ByteBuffer expected = ByteBuffer.allocate(128);
    expected.put(ascii("kvbridge/read/2")).put(binding).put(shape).putInt(0x01020304);

    assertThat(ReadDigest.of(binding, shape, 0x01020304).toBytes()).isEqualTo(sha256(expected));
  }

  @Test
  void everyFieldOfTheLeaseChangesTheBinding() {
    List<byte[]> bindings = new ArrayList<>();
    bindings.add(ReadDigest.binding("req-1", PROMPT, 48, BLOCKS));
    bindings.add(ReadDigest.binding("req-2", PROMPT, 48, BLOCKS));
    bindings.add(ReadDigest.binding("req-1", PROMPT.replace('a', 'b'), 48, BLOCKS));
    bindings.add(ReadDigest.binding("req-1", PROMPT, 47, BLOCKS));
    for (int i = 0; i < BLOCKS.size(); i++) {
      List<Integer> changed = new ArrayList<>(BLOCKS);
      changed.set(i, BLOCKS.get(i) + 1);
      bindings.add(ReadDigest.binding("req-1", PROMPT, 48, changed));
    }
    bindings.add(
        ReadDigest.binding(
            "req-1", PROMPT, 48, List.of(BLOCKS.get(2), BLOCKS.get(1), BLOCKS.get(0))));
    bindings.add(ReadDigest.binding("req-1", PROMPT, 48, BLOCKS.subList(0, 2)));

    assertThat(distinct(bindings)).isEqualTo(bindings.size());
  }

  @Test
  void everyFieldOfEveryRanksLayoutChangesTheShape() {
    KvLayout rank0 = MODEL.forRank(0, 2);
    KvLayout rank1 = MODEL.forRank(1, 2);
    KvLayout consumer = MODEL;
    List<KvLayout> variants =
        List.of(
            new KvLayout("модель@3", 2, 258, 2, 260, 0, 130, 264, 1, 70_000, rank0.order()),
            new KvLayout("модель@2", 1, 258, 2, 260, 0, 130, 264, 1, 70_000, rank0.order()),
            new KvLayout("модель@2", 2, 259, 2, 260, 0, 130, 264, 1, 70_000, rank0.order()),
            new KvLayout("модель@2", 2, 258, 1, 260, 0, 130, 264, 1, 70_000, rank0.order()),
            new KvLayout("модель@2", 2, 258, 2, 261, 0, 130, 264, 1, 70_000, rank0.order()),
            new KvLayout("модель@2", 2, 258, 2, 260, 1, 130, 264, 1, 70_000, rank0.order()),
            new KvLayout("модель@2", 2, 258, 2, 260, 0, 129, 264, 1, 70_000, rank0.order()),
            new KvLayout("модель@2", 2, 258, 2, 260, 0, 130, 263, 1, 70_000, rank0.order()),
            new KvLayout("модель@2", 2, 258, 2, 260, 0, 130, 264, 2, 70_000, rank0.order()),
            new KvLayout("модель@2", 2, 258, 2, 260, 0, 130, 264, 1, 70_001, rank0.order()),
            rank0.withBlockCount(70_000 + 65_536),
            new KvLayout(
                "модель@2", 2, 258, 2, 260, 0, 130, 264, 1, 70_000, MemoryOrder.HEAD_MAJOR));
    List<byte[]> shapes = new ArrayList<>();
    shapes.add(ReadDigest.shape(List.of(rank0, rank1), List.of(consumer)));
    for (KvLayout variant : variants) {
      shapes.add(ReadDigest.shape(List.of(variant, rank1), List.of(consumer)));
      shapes.add(ReadDigest.shape(List.of(rank1, variant), List.of(consumer)));
      shapes.add(ReadDigest.shape(List.of(rank0, rank1), List.of(variant)));
    }

    assertThat(distinct(shapes)).isEqualTo(shapes.size());
  }

  @Test
  void theShapeTellsTheProducersRanksFromTheConsumers() {
    KvLayout a = MODEL.forRank(0, 2);
    KvLayout b = MODEL.forRank(1, 2);

    assertThat(ReadDigest.shape(List.of(a, b), List.of(MODEL)))
        .isNotEqualTo(ReadDigest.shape(List.of(a), List.of(b, MODEL)))
        .isNotEqualTo(ReadDigest.shape(List.of(a, b, MODEL), List.of()))
        .isNotEqualTo(ReadDigest.shape(List.of(b, a), List.of(MODEL)));
  }

  @Test
  void theBindingTheShapeAndTheSkipEachChangeTheReadDigest() {
    byte[] binding = sequence(32, 1);
    byte[] shape = sequence(32, 101);
    byte[] otherBinding = sequence(32, 2);
    byte[] otherShape = sequence(32, 102);
    ReadDigest read = ReadDigest.of(binding, shape, 0);

    assertThat(read)
        .isNotEqualTo(ReadDigest.of(otherBinding, shape, 0))
        .isNotEqualTo(ReadDigest.of(binding, otherShape, 0))
        .isNotEqualTo(ReadDigest.of(shape, binding, 0))
        .isNotEqualTo(ReadDigest.of(binding, shape, 1))
        .isNotEqualTo(ReadDigest.of(binding, shape, 1 << 8))
        .isNotEqualTo(ReadDigest.of(binding, shape, 1 << 16))
        .isNotEqualTo(ReadDigest.of(binding, shape, 1 << 24))
        .isEqualTo(ReadDigest.of(binding.clone(), shape.clone(), 0));
  }

  @Test
  void aDigestFromAPeerMatchesOnlyTheSameBytes() {
    ReadDigest read = ReadDigest.of(sequence(32, 1), sequence(32, 101), 0);
    byte[] bytes = read.toBytes();
    byte[] other = bytes.clone();
    other[31] ^= 0x01;

    assertThat(ReadDigest.fromBytes(bytes).matches(read)).isTrue();
    assertThat(ReadDigest.fromBytes(bytes)).isEqualTo(read).hasSameHashCodeAs(read);
    assertThat(ReadDigest.fromBytes(other).matches(read)).isFalse();
    assertThat(ReadDigest.fromBytes(other)).isNotEqualTo(read);
    assertThat(ReadDigest.fromBytes(other).hashCode()).isNotEqualTo(read.hashCode());
    assertThat(read).isNotEqualTo(hex(bytes));
  }

  @Test
  void aDigestKeepsItsBytesFromChangesToTheArraysItCameFromOrGaveOut() {
    byte[] bytes = sequence(32, 7);
    ReadDigest read = ReadDigest.fromBytes(bytes);

    bytes[0] = 0;
    read.toBytes()[1] = 0;

    assertThat(read.toBytes()).isEqualTo(sequence(32, 7));
  }

  @Test
  void aDigestFromAPeerOfAnotherLengthIsRefused() {
    assertThatThrownBy(() -> ReadDigest.fromBytes(new byte[31]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("a read digest is 32 bytes, got 31");
    assertThatThrownBy(() -> ReadDigest.fromBytes(new byte[33]))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aDigestShowsItsFirstSixBytesInALog() {
    ReadDigest read = ReadDigest.fromBytes(sequence(32, 0xf0));

    assertThat(read).hasToString("ReadDigest[f0f1f2f3f4f5…]");
  }

  /** {@code KvLayout}'s encoding, written out from the protocol's table. */
  private static void encode(KvLayout layout, ByteBuffer out) {
    byte[] model = layout.model().getBytes(StandardCharsets.UTF_8);
    out.putShort((short) model.length).put(model);
    out.put((byte) layout.dtypeBytes());
    out.putShort((short) layout.layers());
    out.put((byte) layout.planes());
    out.putShort((short) layout.kvHeads());
    out.putShort((short) layout.headStart());
    out.putShort((short) layout.headCount());
    out.putShort((short) layout.headDim());
    out.putInt(layout.tokensPerBlock());
    out.putInt(layout.blockCount());
    out.put((byte) (layout.order() == MemoryOrder.BLOCK_MAJOR ? 0 : 1));
    out.put((byte) List.of(KvLayout.Placement.values()).indexOf(layout.placement()));
  }

  private static byte[] sha256(ByteBuffer written) throws Exception {
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    sha.update(written.array(), 0, written.position());
    return sha.digest();
  }

  private static int distinct(List<byte[]> digests) {
    Set<String> seen = new HashSet<>();
    digests.forEach(d -> seen.add(hex(d)));
    return seen.size();
  }

  private static byte[] ascii(String text) {
    return text.getBytes(StandardCharsets.US_ASCII);
  }

  /** {@code length} bytes counting up from {@code first}. */
  private static byte[] sequence(int length, int first) {
    byte[] bytes = new byte[length];
    for (int i = 0; i < length; i++) {
      bytes[i] = (byte) (first + i);
    }
    return bytes;
  }

  private static String hex(byte[] bytes) {
    return HexFormat.of().formatHex(bytes);
  }
}
