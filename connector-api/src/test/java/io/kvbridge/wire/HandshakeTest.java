package io.kvbridge.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.transfer.MemoryKind;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class HandshakeTest {

  @Test
  void requestSurvivesEncodeAndDecodeWithBinaryMetadata() throws Exception {
    byte[] metadata = {0, 1, 0, 2, (byte) 0xff};
    Handshake.Request request = new Handshake.Request("decode-0", "abc", metadata);

    Handshake.Request decoded = Handshake.decodeRequest(Handshake.encode(request));

    assertThat(decoded.consumerEngineId()).isEqualTo("decode-0");
    assertThat(decoded.fingerprint()).isEqualTo("abc");
    assertThat(decoded.consumerMetadata()).containsExactly(metadata);
  }

  @Test
  void acceptedResponseSurvivesEncodeAndDecode() throws Exception {
    Handshake.Accepted accepted =
        new Handshake.Accepted(
            "prefill-0",
            new byte[] {7, 0, 7},
            64,
            4096,
            0x7f00_0000_0000L,
            0,
            MemoryKind.VRAM,
            123L);

    Handshake.Accepted decoded =
        (Handshake.Accepted) Handshake.decodeResponse(Handshake.encode(accepted));

    assertThat(decoded.producerEngineId()).isEqualTo("prefill-0");
    assertThat(decoded.blockCount()).isEqualTo(64);
    assertThat(decoded.regionAddress()).isEqualTo(0x7f00_0000_0000L);
    assertThat(decoded.memoryKind()).isEqualTo(MemoryKind.VRAM);
    assertThat(decoded.clockSampleNanos()).isEqualTo(123L);
    assertThat(decoded.producerMetadata()).containsExactly(7, 0, 7);
  }

  @Test
  void refusalCarriesItsReason() throws Exception {
    Handshake.Response decoded =
        Handshake.decodeResponse(Handshake.encode(new Handshake.Refused("incompatible")));

    assertThat(decoded).isEqualTo(new Handshake.Refused("incompatible"));
  }

  @Test
  void responseWithNonPositiveLayoutIsRefused() {
    byte[] bytes =
        Handshake.encode(
            new Handshake.Accepted("p", new byte[0], 0, 4096, 0, 0, MemoryKind.DRAM, 0));

    assertThatThrownBy(() -> Handshake.decodeResponse(bytes)).hasMessageContaining("layout");
  }

  @Test
  void metadataLengthBeyondTheFrameIsRefused() {
    byte[] bytes = Handshake.encode(new Handshake.Request("d", "f", new byte[10]));

    assertThatThrownBy(() -> Handshake.decodeRequest(Arrays.copyOf(bytes, bytes.length - 5)))
        .isInstanceOf(MalformedMessageException.class);
  }
}
