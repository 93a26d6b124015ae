package io.kvbridge.runtime.producer;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.lease.LeaseToken;
import io.kvbridge.wire.LeaseRef;
import io.kvbridge.wire.ProtocolMessage;
import java.util.Collections;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

class LayerStreamsTest {

  /**
   * An announcement split at {@link LayerStreams#layersPerMessage} fits one notification, and one
   * more layer would not (unless every layer fits in one message already).
   */
  @Property(tries = 200)
  void anAnnouncementIsSplitIntoTheFewestMessagesThatFit(
      @ForAll @IntRange(min = 1, max = 8) int ranks,
      @ForAll @IntRange(min = 1, max = 8_000) int blocks) {
    String requestId = "request-" + blocks;
    LeaseRef lease = new LeaseRef(requestId, LeaseToken.random().value());
    int layers = LayerStreams.layersPerMessage(requestId, ranks, blocks);

    if (LayerStreams.fits(requestId, ranks, blocks)) {
      assertThat(ProtocolMessage.encode(message(lease, ranks, layers, blocks)).length)
          .isLessThanOrEqualTo(ProtocolMessage.MAX_BYTES);
      assertThat(ProtocolMessage.Layers.encodedBytes(requestId, ranks, layers + 1, blocks))
          .isGreaterThan(ProtocolMessage.MAX_BYTES);
    } else {
      assertThat(ProtocolMessage.Layers.encodedBytes(requestId, ranks, 1, blocks))
          .isGreaterThan(ProtocolMessage.MAX_BYTES);
    }
  }

  private static ProtocolMessage.Layers message(LeaseRef lease, int ranks, int layers, int blocks) {
    List<List<Integer>> rank = Collections.nCopies(layers, Collections.nCopies(blocks, 7));
    return new ProtocolMessage.Layers(lease, 0, layers, Collections.nCopies(ranks, rank));
  }
}
