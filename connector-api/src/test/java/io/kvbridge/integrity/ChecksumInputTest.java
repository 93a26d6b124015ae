package io.kvbridge.integrity;

import static io.kvbridge.integrity.ChecksumSchemeTest.crc;
import static io.kvbridge.integrity.ChecksumSchemeTest.random;
import static io.kvbridge.integrity.ChecksumSchemeTest.windows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.transfer.ByteArrayMemory;
import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

class ChecksumInputTest {

  private final byte[] a = random(8000, 11);
  private final byte[] b = random(8000, 12);
  private final ByteArrayMemory memoryA = new ByteArrayMemory(a);
  private final ByteArrayMemory memoryB = new ByteArrayMemory(b);

  // Lengths 1000 + 3000 + 2500 + 1 + 100 = 6601: the sampled scheme's stride is
  // (6601 − 512) / 7 = 869, so most of its windows start inside a range and run into the next.
  private final List<ChecksumInput.Range> ranges =
      List.of(
          new ChecksumInput.Range(memoryA, 100, 1000),
          new ChecksumInput.Range(memoryB, 2000, 3000),
          new ChecksumInput.Range(memoryA, 3000, 2500),
          new ChecksumInput.Range(memoryB, 10, 1),
          new ChecksumInput.Range(memoryA, 7000, 100));

  @Test
  void rangesOfSeveralMemoriesAreOneSequenceInTheirOrder() {
    ChecksumInput input = ChecksumInput.of(ranges);
    byte[] sequence = concatenation();

    assertThat(input.length()).isEqualTo(6601);
    assertThat(ChecksumScheme.CRC32C.checksum(input)).isEqualTo(crc(sequence, 0, sequence.length));
    assertThat(ChecksumScheme.CRC32C_SAMPLED.checksum(input)).isEqualTo(windows(sequence, 869));
  }

  @Test
  void aSliceStartingInsideARangeReadsOnFromThere() {
    ChecksumInput input = ChecksumInput.of(ranges);
    byte[] sequence = concatenation();

    for (int[] slice : new int[][] {{0, 6601}, {999, 2}, {1500, 4000}, {4000, 2601}, {6500, 101}}) {
      CRC32C crc = new CRC32C();
      input.update(crc, slice[0], slice[1]);

      assertThat((int) crc.getValue())
          .as("[%d, +%d)", slice[0], slice[1])
          .isEqualTo(crc(sequence, slice[0], slice[1]));
    }
  }

  @Test
  void anEmptySliceAnywhereInTheSequenceFeedsNothing() {
    ChecksumInput input = ChecksumInput.of(memoryA, 0, 100);
    CRC32C crc = new CRC32C();

    input.update(crc, 0, 0);
    input.update(crc, 40, 0);
    input.update(crc, 100, 0);

    assertThat(crc.getValue()).isEqualTo(new CRC32C().getValue());
  }

  @Test
  void aSliceOutsideTheSequenceIsRefusedWithItsBounds() {
    ChecksumInput input = ChecksumInput.of(memoryA, 0, 100);
    CRC32C crc = new CRC32C();

    assertThatThrownBy(() -> input.update(crc, 90, 11))
        .isInstanceOf(IndexOutOfBoundsException.class)
        .hasMessage("[90, +11) is outside a sequence of 100 bytes");
    assertThatThrownBy(() -> input.update(crc, 101, 0))
        .hasMessage("[101, +0) is outside a sequence of 100 bytes");
    assertThatThrownBy(() -> input.update(crc, -1, 1))
        .hasMessage("[-1, +1) is outside a sequence of 100 bytes");
    assertThatThrownBy(() -> input.update(crc, 0, -1))
        .hasMessage("[0, +-1) is outside a sequence of 100 bytes");
    assertThat(crc.getValue()).isEqualTo(new CRC32C().getValue());
  }

  private byte[] concatenation() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(a, 100, 1000);
    out.write(b, 2000, 3000);
    out.write(a, 3000, 2500);
    out.write(b, 10, 1);
    out.write(a, 7000, 100);
    return out.toByteArray();
  }
}
