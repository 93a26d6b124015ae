package io.kvbridge.integrity;

import static io.kvbridge.integrity.ChecksumScheme.CRC32C;
import static io.kvbridge.integrity.ChecksumScheme.CRC32C_SAMPLED;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.transfer.ByteArrayMemory;
import io.kvbridge.transfer.MemoryKind;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The block checksums as {@code docs/protocol.md} specifies them ("Checksums"); every expected
 * value is computed here with the JDK's CRC-32C over the bytes the protocol names.
 */
class ChecksumSchemeTest {

  /** A block longer than the sampled scheme's windows; its stride is (10000 − 512) / 7 = 1355. */
  private static final int LARGE = 10_000;

  private static final int STRIDE = 1355;

  @Test
  void crc32cIsTheCastagnoliCrcWithItsStandardCheckValue() {
    byte[] check = "123456789".getBytes(StandardCharsets.US_ASCII);

    assertThat(CRC32C.checksum(new ByteArrayMemory(check), 0, check.length)).isEqualTo(0xE3069283);
  }

  @Test
  void theChecksumsOfTheGoldenBlocksAreTheirVectors() {
    // connector-tck's golden vectors: byte i of the block is i % 251.
    assertThat(hex(CRC32C, counting(1024))).isEqualTo("2af62c0c");
    assertThat(hex(CRC32C_SAMPLED, counting(1024))).isEqualTo("2af62c0c");
    assertThat(hex(CRC32C, counting(8192))).isEqualTo("5372b398");
    assertThat(hex(CRC32C_SAMPLED, counting(8192))).isEqualTo("397a0a85");
  }

  @Test
  void theWholeSchemeCoversEveryByteOfALargeBlock() {
    byte[] block = random(LARGE, 1);
    ByteArrayMemory memory = new ByteArrayMemory(block);
    int checksum = CRC32C.checksum(memory, 0, LARGE);

    assertThat(checksum).isEqualTo(crc(block, 0, LARGE));
    for (int at : new int[] {0, 600, STRIDE - 1, 5000, LARGE - 1}) {
      block[at] ^= 0x01;
      assertThat(CRC32C.checksum(memory, 0, LARGE))
          .as("byte %d flipped", at)
          .isNotEqualTo(checksum);
      block[at] ^= 0x01;
    }
  }

  @Test
  void aChecksumCoversTheBlockAtItsOffsetInTheMemory() {
    byte[] bytes = random(3 * 1024, 2);
    ByteArrayMemory memory = new ByteArrayMemory(bytes);

    assertThat(CRC32C.checksum(memory, 1024, 1024)).isEqualTo(crc(bytes, 1024, 1024));
    assertThat(CRC32C_SAMPLED.checksum(memory, 1024, 1024)).isEqualTo(crc(bytes, 1024, 1024));
  }

  @Test
  void theSampledSchemeCoversTheWholeBlockUpToEightWindows() {
    for (int size : new int[] {1, 511, 1024, 4095}) {
      byte[] block = random(size, size);

      assertThat(CRC32C_SAMPLED.checksum(new ByteArrayMemory(block), 0, size))
          .as("a block of %d bytes", size)
          .isEqualTo(crc(block, 0, size));
    }
  }

  @Test
  void eightWindowsOfABlockOfExactlyEightWindowsTileIt() {
    // The stride is (4096 − 512) / 7 = 512: the windows cover the block once, in order, so
    // sampling it and reading it whole agree.
    byte[] block = random(8 * 512, 3);

    assertThat(CRC32C_SAMPLED.checksum(new ByteArrayMemory(block), 0, block.length))
        .isEqualTo(crc(block, 0, block.length))
        .isEqualTo(windows(block, 512));
  }

  @Test
  void theSampledSchemeReadsEightWindowsOf512BytesAtMultiplesOfTheStride() {
    byte[] block = random(LARGE, 4);
    int checksum = CRC32C_SAMPLED.checksum(new ByteArrayMemory(block), 0, LARGE);

    assertThat(checksum).isEqualTo(windows(block, STRIDE));
    assertThat(checksum).isNotEqualTo(crc(block, 0, LARGE));
  }

  @Test
  void aByteFlippedInAnyWindowChangesTheSampledChecksumAndOneBetweenWindowsDoesNot() {
    byte[] block = random(LARGE, 5);
    ByteArrayMemory memory = new ByteArrayMemory(block);
    int checksum = CRC32C_SAMPLED.checksum(memory, 0, LARGE);

    for (int i = 0; i < ChecksumScheme.SAMPLES; i++) {
      int start = i * STRIDE;
      int end = start + ChecksumScheme.WINDOW;
      for (int inside : new int[] {start, end - 1}) {
        block[inside] ^= 0x01;
        assertThat(CRC32C_SAMPLED.checksum(memory, 0, LARGE))
            .as("byte %d of window %d flipped", inside, i)
            .isNotEqualTo(checksum);
        block[inside] ^= 0x01;
      }
      for (int outside : new int[] {start - 1, end}) {
        if (outside < 0) {
          continue;
        }
        block[outside] ^= 0x01;
        assertThat(CRC32C_SAMPLED.checksum(memory, 0, LARGE))
            .as("byte %d next to window %d flipped", outside, i)
            .isEqualTo(checksum);
        block[outside] ^= 0x01;
      }
    }
  }

  @Test
  void blocksInDeviceMemoryAreSampledAndBlocksInHostMemoryReadWhole() {
    assertThat(ChecksumScheme.forMemory(MemoryKind.VRAM)).isEqualTo(CRC32C_SAMPLED);
    assertThat(ChecksumScheme.forMemory(MemoryKind.DRAM)).isEqualTo(CRC32C);
  }

  @Test
  void aSchemeIsFoundByItsWireNameOnly() {
    assertThat(ChecksumScheme.fromWireName("crc32c")).contains(CRC32C);
    assertThat(ChecksumScheme.fromWireName("crc32c-sampled")).contains(CRC32C_SAMPLED);
    assertThat(ChecksumScheme.fromWireName("CRC32C")).isEmpty();
    assertThat(ChecksumScheme.fromWireName("crc32")).isEmpty();
  }

  /** The CRC-32C of {@code length} bytes of {@code bytes} from {@code offset}. */
  static int crc(byte[] bytes, int offset, int length) {
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    crc.update(bytes, offset, length);
    return (int) crc.getValue();
  }

  /** The CRC-32C computed on through the eight windows of 512 bytes at multiples of stride. */
  static int windows(byte[] bytes, int stride) {
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    for (int i = 0; i < 8; i++) {
      crc.update(bytes, i * stride, 512);
    }
    return (int) crc.getValue();
  }

  /** {@code size} bytes drawn from a generator seeded with {@code seed}. */
  static byte[] random(int size, long seed) {
    byte[] bytes = new byte[size];
    new Random(seed).nextBytes(bytes);
    return bytes;
  }

  private static byte[] counting(int size) {
    byte[] bytes = new byte[size];
    for (int i = 0; i < size; i++) {
      bytes[i] = (byte) (i % 251);
    }
    return bytes;
  }

  private static String hex(ChecksumScheme scheme, byte[] block) {
    return HexFormat.of().toHexDigits(scheme.checksum(new ByteArrayMemory(block), 0, block.length));
  }
}
