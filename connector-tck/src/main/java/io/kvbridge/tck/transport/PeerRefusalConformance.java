package io.kvbridge.tck.transport;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Peers and pairing: an agent posts to and notifies only peers whose metadata it loaded and did not
 * invalidate, and only lists of pieces that pair up.
 */
public abstract class PeerRefusalConformance extends TransportFixture {

  /** These tests, run against {@code connector}. */
  protected PeerRefusalConformance(ConnectorUnderTest connector) {
    super(connector);
  }

  @Test
  void postingToAPeerWhoseMetadataWasNeverLoadedIsRefused() {
    Transport initiator = transport("initiator");
    KvMemory local = registered(initiator);
    Transport target = transport("target");
    KvMemory remote = registered(target);

    assertAReadFromTargetIsRefused(initiator, local, remote);
  }

  @Test
  void postingToAnInvalidatedPeerIsRefused() {
    Pair pair = connectedPair();

    pair.initiator().invalidateRemote("target");

    assertAReadFromTargetIsRefused(pair.initiator(), pair.initiatorMemory(), pair.targetMemory());
  }

  @Test
  void notifyingAPeerWhoseMetadataWasNeverLoadedIsRefused() {
    Transport initiator = transport("initiator");
    transport("target");

    assertThatThrownBy(() -> initiator.notify("target", new byte[] {1}))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void notifyingAnInvalidatedPeerIsRefused() {
    Pair pair = connectedPair();

    pair.initiator().invalidateRemote("target");

    assertThatThrownBy(() -> pair.initiator().notify("target", new byte[] {1}))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void invalidatingAnUnknownPeerIsIgnored() {
    Transport t = transport("agent");

    assertThatCode(() -> t.invalidateRemote("nobody")).doesNotThrowAnyException();
  }

  @Test
  void reloadingAnInvalidatedPeerMakesItReachableAgain() {
    Pair pair = connectedPair();
    pair.initiator().invalidateRemote("target");

    pair.initiator().loadRemoteMetadata(pair.target().localMetadata());

    assertDone(
        pair.initiator(),
        pair.initiator()
            .post(
                TransferOp.READ,
                blocks(pair.initiatorMemory(), 0),
                "target",
                blocks(pair.targetMemory(), 0),
                Optional.empty()));
  }

  @Test
  void listsOfDifferentSizesAreRefused() {
    Pair pair = connectedPair();

    assertThatThrownBy(
            () ->
                pair.initiator()
                    .post(
                        TransferOp.READ,
                        blocks(pair.initiatorMemory(), 0, 1),
                        "target",
                        blocks(pair.targetMemory(), 0),
                        Optional.empty()))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void piecesOfDifferentLengthsAreRefused() {
    Pair pair = connectedPair();
    KvMemory remote = pair.targetMemory();

    assertThatThrownBy(
            () ->
                pair.initiator()
                    .post(
                        TransferOp.READ,
                        blocks(pair.initiatorMemory(), 0),
                        "target",
                        new DescriptorList(
                            remote.kind(),
                            List.of(new Descriptor(remote.address(), BLOCK_BYTES / 2, 0))),
                        Optional.empty()))
        .isInstanceOf(TransportException.class);
  }
}
