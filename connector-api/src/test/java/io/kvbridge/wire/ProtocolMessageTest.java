package io.kvbridge.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.integrity.ReadDigest;
import io.kvbridge.lease.LeaseToken;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

class ProtocolMessageTest {

  private static final ReadDigest DIGEST = ReadDigest.fromBytes(new byte[ReadDigest.BYTES]);

  private final LeaseRef lease = new LeaseRef("req-1", LeaseToken.random().value());

  @Test
  void everyMessageSurvivesEncodeAndDecode() throws Exception {
    List<ProtocolMessage> messages =
        List.of(
            new ProtocolMessage.Completion(lease, "decode-0", DIGEST, 32),
            new ProtocolMessage.Ack(lease),
            new ProtocolMessage.Nack(lease, "EXPIRED"),
            new ProtocolMessage.Heartbeat(
                "decode-0",
                17L,
                List.of(lease, new LeaseRef("req-2", LeaseToken.random().value()))),
            new ProtocolMessage.Renewed(
                17L, 99L, List.of(new ProtocolMessage.Renewal(lease, 1_000_000L))),
            new ProtocolMessage.Confirm(lease, "decode-0", DIGEST, 32, 5L),
            new ProtocolMessage.Confirmed(lease, 1_000_000L, 5L, 77L),
            new ProtocolMessage.Release(lease, "decode-0", "aborted on D"));

    for (ProtocolMessage message : messages) {
      assertThat(ProtocolMessage.decode(ProtocolMessage.encode(message))).isEqualTo(message);
    }
  }

  @Test
  void bytesWithoutTheMagicAreRefused() {
    assertThatThrownBy(() -> ProtocolMessage.decode("req-1:1".getBytes(StandardCharsets.UTF_8)))
        .isInstanceOf(MalformedMessageException.class)
        .hasMessageContaining("magic");
  }

  @Test
  void anotherVersionIsRefusedNamingBoth() {
    byte[] bytes = ProtocolMessage.encode(new ProtocolMessage.Ack(lease));
    bytes[3] = 1;

    assertThatThrownBy(() -> ProtocolMessage.decode(bytes))
        .hasMessageContaining("version 1")
        .hasMessageContaining("speaks version " + ProtocolMessage.VERSION);
  }

  @Test
  void unknownTypeIsRefused() {
    byte[] bytes = ProtocolMessage.encode(new ProtocolMessage.Ack(lease));
    bytes[4] = 99;

    assertThatThrownBy(() -> ProtocolMessage.decode(bytes))
        .hasMessageContaining("unknown message type 99");
  }

  @Test
  void truncatedMessageIsRefused() {
    byte[] bytes =
        ProtocolMessage.encode(new ProtocolMessage.Completion(lease, "decode-0", DIGEST, 32));

    assertThatThrownBy(() -> ProtocolMessage.decode(Arrays.copyOf(bytes, bytes.length - 3)))
        .hasMessageContaining("truncated");
  }

  @Test
  void trailingBytesAreRefused() {
    byte[] bytes = ProtocolMessage.encode(new ProtocolMessage.Ack(lease));

    assertThatThrownBy(() -> ProtocolMessage.decode(Arrays.copyOf(bytes, bytes.length + 1)))
        .hasMessageContaining("trailing");
  }

  @Test
  void malformedTokenIsRefused() {
    byte[] bytes =
        ProtocolMessage.encode(new ProtocolMessage.Ack(new LeaseRef("r", "z".repeat(32))));

    assertThatThrownBy(() -> ProtocolMessage.decode(bytes)).hasMessageContaining("lease token");
  }

  @Test
  void oversizedMessageIsRefusedBeforeParsing() {
    byte[] huge = new byte[ProtocolMessage.MAX_BYTES + 1];

    assertThatThrownBy(() -> ProtocolMessage.decode(huge)).hasMessageContaining("more than");
  }

  @Test
  void heartbeatWithTooManyLeasesIsRefused() {
    byte[] bytes =
        ProtocolMessage.encode(
            new ProtocolMessage.Heartbeat(
                "d", 0L, Collections.nCopies(ProtocolMessage.MAX_HEARTBEAT_LEASES + 1, lease)));

    assertThatThrownBy(() -> ProtocolMessage.decode(bytes)).hasMessageContaining("leases");
  }

  @Property(tries = 2000)
  void arbitraryBytesNeverDecodeIntoAnythingButAMessageOrARefusal(@ForAll byte[] bytes) {
    try {
      ProtocolMessage decoded = ProtocolMessage.decode(bytes);
      assertThat(ProtocolMessage.encode(decoded)).isEqualTo(bytes);
    } catch (MalformedMessageException refused) {
      assertThat(refused.getMessage()).isNotBlank();
    }
  }

  @Property(tries = 1000)
  void corruptingOneByteOfAValidMessageNeverThrowsAnythingElse(
      @ForAll int position, @ForAll byte value) {
    byte[] bytes =
        ProtocolMessage.encode(new ProtocolMessage.Heartbeat("decode-0", 3L, List.of(lease)));
    bytes[Math.floorMod(position, bytes.length)] = value;
    try {
      ProtocolMessage.decode(bytes);
    } catch (MalformedMessageException refused) {
      assertThat(refused.getMessage()).isNotBlank();
    }
  }
}
