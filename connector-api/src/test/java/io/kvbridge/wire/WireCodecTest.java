package io.kvbridge.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** {@link WireWriter} and {@link WireReader}: the field encoding every frame is built from. */
class WireCodecTest {

  private static final byte[] MAGIC = "ABC".getBytes(StandardCharsets.US_ASCII);

  @Test
  void integersAreWrittenBigEndianOneAfterAnother() {
    byte[] bytes =
        new WireWriter()
            .u8(0x01)
            .u16(0x0203)
            .i32(0x04050607)
            .i64(0x08090a0b0c0d0e0fL)
            .raw(new byte[] {0x10})
            .toByteArray();

    assertThat(bytes).containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
  }

  @Test
  void integersReadBackAsWrittenAndCountThePosition() throws Exception {
    WireReader r =
        new WireReader(
            new WireWriter().u8(0xfe).u16(0xfffe).i32(-2).i64(Long.MIN_VALUE).toByteArray());

    assertThat(r.u8()).isEqualTo(0xfe);
    assertThat(r.u16()).isEqualTo(0xfffe);
    assertThat(r.position()).isEqualTo(3);
    assertThat(r.i32()).isEqualTo(-2);
    assertThat(r.i64()).isEqualTo(Long.MIN_VALUE);
    r.expectEnd();
  }

  @Test
  void everyIntegerPastTheEndIsTruncated() {
    assertThatThrownBy(() -> new WireReader(new byte[0]).u8()).hasMessage("truncated");
    assertThatThrownBy(() -> new WireReader(new byte[1]).u16()).hasMessage("truncated");
    assertThatThrownBy(() -> new WireReader(new byte[3]).i32()).hasMessage("truncated");
    assertThatThrownBy(() -> new WireReader(new byte[7]).i64()).hasMessage("truncated");
  }

  @Test
  void textOfTheLongestLengthIsRead() throws Exception {
    WireReader r = new WireReader(new WireWriter().text("x".repeat(8)).toByteArray());

    assertThat(r.text("model", 8)).isEqualTo("x".repeat(8));
  }

  @Test
  void textOneCharacterTooLongIsRefusedNamingTheField() {
    WireReader r = new WireReader(new WireWriter().text("x".repeat(9)).toByteArray());

    assertThatThrownBy(() -> r.text("model", 8))
        .isInstanceOf(MalformedMessageException.class)
        .hasMessage("model must be 1 to 8 characters, got 9");
  }

  @Test
  void blankTextIsRefusedNamingTheField() {
    WireReader r = new WireReader(new WireWriter().text(" ").toByteArray());

    assertThatThrownBy(() -> r.text("model", 8))
        .hasMessage("model must be 1 to 8 characters, got 1");
  }

  @Test
  void textThatIsNotModifiedUtf8IsRefusedNamingTheField() {
    WireReader r = new WireReader(new byte[] {0, 1, (byte) 0x80});

    assertThatThrownBy(() -> r.text("model", 8)).hasMessage("model is not valid text");
  }

  @Test
  void textLongerThanTheFrameIsTruncated() {
    WireReader r = new WireReader(new byte[] {0, 5, 'a'});

    assertThatThrownBy(() -> r.text("model", 8)).hasMessage("truncated");
  }

  @Test
  void emptyBlobIsRead() throws Exception {
    WireReader r = new WireReader(new WireWriter().blob(new byte[0]).toByteArray());

    assertThat(r.blob("metadata", 4)).isEmpty();
    r.expectEnd();
  }

  @Test
  void blobOfTheLargestLengthIsRead() throws Exception {
    WireReader r = new WireReader(new WireWriter().blob(new byte[] {1, 2, 3, 4}).toByteArray());

    assertThat(r.blob("metadata", 4)).containsExactly(1, 2, 3, 4);
  }

  @Test
  void blobOneByteTooLongIsRefusedNamingTheField() {
    WireReader r = new WireReader(new WireWriter().blob(new byte[5]).toByteArray());

    assertThatThrownBy(() -> r.blob("metadata", 4)).hasMessage("metadata claims 5 bytes; limit 4");
  }

  @Test
  void blobOfNegativeLengthIsRefusedNamingTheField() {
    WireReader r = new WireReader(new WireWriter().i32(-1).toByteArray());

    assertThatThrownBy(() -> r.blob("metadata", 4)).hasMessage("metadata claims -1 bytes; limit 4");
  }

  @Test
  void blobClaimingMoreThanTheFrameHoldsIsTruncated() {
    WireReader r = new WireReader(new WireWriter().i32(3).raw(new byte[] {1, 2}).toByteArray());

    assertThatThrownBy(() -> r.blob("metadata", 100)).hasMessage("truncated");
  }

  @Test
  void fixedFieldMayBeTheWholeFrame() throws Exception {
    assertThat(new WireReader(new byte[] {1, 2, 3}).fixed(3)).containsExactly(1, 2, 3);
  }

  @Test
  void fixedFieldPastTheEndIsTruncated() {
    WireReader r = new WireReader(new byte[] {1, 2, 3});

    assertThatThrownBy(() -> r.fixed(4)).hasMessage("truncated");
  }

  @Test
  void trailingBytesAreCountedInTheRefusal() throws Exception {
    WireReader r = new WireReader(new byte[] {1, 2, 3});
    r.u8();

    assertThatThrownBy(r::expectEnd).hasMessage("2 unexpected trailing bytes");
  }

  @Test
  void magicAndVersionAreChecked() throws Exception {
    new WireReader(new WireWriter().raw(MAGIC).u8(3).toByteArray()).expectMagic(MAGIC, "thing", 3);

    assertThatThrownBy(
            () ->
                new WireReader(new WireWriter().raw(new byte[] {'A', 'B', 'D'}).u8(3).toByteArray())
                    .expectMagic(MAGIC, "thing", 3))
        .hasMessage("not a thing (bad magic)");
    assertThatThrownBy(
            () ->
                new WireReader(new WireWriter().raw(MAGIC).u8(2).toByteArray())
                    .expectMagic(MAGIC, "thing", 3))
        .hasMessage("thing of version 2; this peer speaks version 3");
  }
}
