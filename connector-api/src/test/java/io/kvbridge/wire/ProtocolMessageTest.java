package io.kvbridge.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.integrity.ReadDigest;
import io.kvbridge.lease.LeaseToken;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
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
  void aMessagesKindIsItsTypeInLowerCase() {
    assertThat(new ProtocolMessage.Ack(lease).kind()).isEqualTo("ack");
    assertThat(new ProtocolMessage.Completion(lease, "d", digest(), 0).kind())
        .isEqualTo("completion");
  }

  @Test
  void eachMessageIsRoutedToTheSideOfItsDirection() {
    List<String> routed = new ArrayList<>();
    ProtocolMessage.Router router =
        new ProtocolMessage.Router() {
          @Override
          public void toProducer(ProtocolMessage.ToProducer message) {
            routed.add("P " + message.kind());
          }

          @Override
          public void toConsumer(ProtocolMessage.ToConsumer message) {
            routed.add("D " + message.kind());
          }
        };
    List<ProtocolMessage> all =
        List.of(
            new ProtocolMessage.Completion(lease, "d", digest(), 0),
            new ProtocolMessage.Ack(lease),
            new ProtocolMessage.Nack(lease, "EXPIRED"),
            new ProtocolMessage.Heartbeat("d", 1, List.of(lease)),
            new ProtocolMessage.Renewed(1, 2, List.of(new ProtocolMessage.Renewal(lease, 3))),
            new ProtocolMessage.Confirm(lease, "d", digest(), 0, 1),
            new ProtocolMessage.Confirmed(lease, 1, 2, 3),
            new ProtocolMessage.Release(lease, "d", "cancelled"),
            new ProtocolMessage.Layers(lease, 0, 1, List.of(List.of(List.of(7)))));

    all.forEach(m -> m.route(router));

    assertThat(routed)
        .containsExactly(
            "P completion",
            "D ack",
            "D nack",
            "P heartbeat",
            "D renewed",
            "P confirm",
            "D confirmed",
            "P release",
            "D layers");
  }

  private static ReadDigest digest() {
    return ReadDigest.fromBytes(new byte[ReadDigest.BYTES]);
  }

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
            new ProtocolMessage.Release(lease, "decode-0", "aborted on D"),
            new ProtocolMessage.Layers(
                lease,
                3,
                5,
                List.of(
                    List.of(List.of(1, -2, 3), List.of(4, 5, Integer.MIN_VALUE)),
                    List.of(List.of(7, 8, 9), List.of(10, 11, Integer.MAX_VALUE)))));

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
  void layersThatNameNoLayerOrNoRankOrNoBlockAreRefusedOnTheWire() {
    byte[] good =
        ProtocolMessage.encode(
            new ProtocolMessage.Layers(lease, 2, 3, List.of(List.of(List.of(1, 2)))));
    // magic, version, type, then the lease: 2 + 5 ("req-1") + 2 + 32 (the token)
    int at = 3 + 1 + 1 + 2 + 5 + 2 + 32;

    byte[] backwards = good.clone();
    backwards[at + 1] = 4; // from 4
    assertThatThrownBy(() -> ProtocolMessage.decode(backwards))
        .isInstanceOf(MalformedMessageException.class)
        .hasMessageContaining("name no layer");
    byte[] noRank = good.clone();
    noRank[at + 4] = 0;
    assertThatThrownBy(() -> ProtocolMessage.decode(noRank))
        .isInstanceOf(MalformedMessageException.class)
        .hasMessageContaining("0 ranks");
    byte[] noBlock = good.clone();
    noBlock[at + 8] = 0;
    assertThatThrownBy(() -> ProtocolMessage.decode(noBlock))
        .isInstanceOf(MalformedMessageException.class)
        .hasMessageContaining("0 blocks");
    byte[] truncated = Arrays.copyOf(good, good.length - 1);
    assertThatThrownBy(() -> ProtocolMessage.decode(truncated))
        .isInstanceOf(MalformedMessageException.class);
  }

  @Test
  void layersOfUnevenShapeCannotBeMade() {
    assertThatThrownBy(
            () ->
                new ProtocolMessage.Layers(
                    lease, 0, 2, List.of(List.of(List.of(1), List.of(1, 2)))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("as many in every layer");
    assertThatThrownBy(() -> new ProtocolMessage.Layers(lease, 0, 2, List.of(List.of(List.of(1)))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("one list per layer");
    assertThatThrownBy(() -> new ProtocolMessage.Layers(lease, 1, 1, List.of()))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void theLayersSizeBoundCoversTheEncodedMessage() {
    ProtocolMessage.Layers layers =
        new ProtocolMessage.Layers(
            lease, 0, 3, Collections.nCopies(2, Collections.nCopies(3, Collections.nCopies(5, 9))));

    assertThat(ProtocolMessage.encode(layers).length)
        .isLessThanOrEqualTo(ProtocolMessage.Layers.encodedBytes(lease.requestId(), 2, 3, 5));
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

  @Test
  void messageOfTheLargestSizeIsDecoded() throws Exception {
    ProtocolMessage.Heartbeat largest = heartbeatOfSize(ProtocolMessage.MAX_BYTES);

    assertThat(ProtocolMessage.decode(ProtocolMessage.encode(largest))).isEqualTo(largest);
  }

  @Test
  void messageOneByteOverTheLargestSizeIsRefusedForItsSize() {
    byte[] bytes = ProtocolMessage.encode(heartbeatOfSize(ProtocolMessage.MAX_BYTES + 1));

    assertThatThrownBy(() -> ProtocolMessage.decode(bytes))
        .hasMessage(
            (ProtocolMessage.MAX_BYTES + 1) + " bytes, more than " + ProtocolMessage.MAX_BYTES);
  }

  @Test
  void heartbeatWithTheMostLeasesIsDecoded() throws Exception {
    ProtocolMessage.Heartbeat most =
        new ProtocolMessage.Heartbeat(
            "d", 0L, Collections.nCopies(ProtocolMessage.MAX_HEARTBEAT_LEASES, lease));

    assertThat(ProtocolMessage.decode(ProtocolMessage.encode(most))).isEqualTo(most);
  }

  @Test
  void heartbeatWithoutLeasesIsRefused() {
    byte[] bytes = ProtocolMessage.encode(new ProtocolMessage.Heartbeat("d", 0L, List.of()));

    assertThatThrownBy(() -> ProtocolMessage.decode(bytes))
        .hasMessage("a heartbeat or renewal names 1 to 4096 leases, got 0");
  }

  @Test
  void reasonsAreKeptUpToTheLongestTextAndClippedBeyond() throws Exception {
    String longest = "r".repeat(ProtocolMessage.MAX_TEXT);

    assertThat(
            ProtocolMessage.decode(
                ProtocolMessage.encode(new ProtocolMessage.Nack(lease, longest + "tail"))))
        .isEqualTo(new ProtocolMessage.Nack(lease, longest));
    assertThat(ProtocolMessage.decode(ProtocolMessage.encode(new ProtocolMessage.Nack(lease, " "))))
        .isEqualTo(new ProtocolMessage.Nack(lease, "unspecified"));
  }

  /** A heartbeat whose encoding is exactly {@code size} bytes, its leases' request ids padded. */
  private ProtocolMessage.Heartbeat heartbeatOfSize(int size) {
    int header = size(List.of());
    int perLease = size(List.of(leaseWithIdOf(ProtocolMessage.MAX_TEXT))) - header;
    int count = (size - header + perLease - 1) / perLease;
    int[] idLengths = new int[count];
    Arrays.fill(idLengths, ProtocolMessage.MAX_TEXT);
    int excess = count * perLease - (size - header);
    for (int i = count - 1; excess > 0; i--) {
      int shave = Math.min(excess, ProtocolMessage.MAX_TEXT - 1);
      idLengths[i] -= shave;
      excess -= shave;
    }
    List<LeaseRef> leases = Arrays.stream(idLengths).mapToObj(this::leaseWithIdOf).toList();
    ProtocolMessage.Heartbeat heartbeat = new ProtocolMessage.Heartbeat("d", 0L, leases);
    assertThat(ProtocolMessage.encode(heartbeat)).hasSize(size);
    return heartbeat;
  }

  private LeaseRef leaseWithIdOf(int length) {
    return new LeaseRef("q".repeat(length), lease.token());
  }

  private static int size(List<LeaseRef> leases) {
    return ProtocolMessage.encode(new ProtocolMessage.Heartbeat("d", 0L, leases)).length;
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
