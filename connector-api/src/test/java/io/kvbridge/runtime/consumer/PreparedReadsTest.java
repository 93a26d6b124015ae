package io.kvbridge.runtime.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.runtime.engine.Ranks;
import io.kvbridge.runtime.engine.StubMemory;
import io.kvbridge.runtime.engine.StubTransport;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.KvRegions;
import io.kvbridge.transfer.PreparedList;
import io.kvbridge.transfer.TransportException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Reads between ranks of one shape go by block index from lists prepared once; the rest is
 * described piece by piece; lists a failed post used, and every list at close, are released.
 */
class PreparedReadsTest {

  /** Blocks of 4 tokens of 4 bytes: 16 bytes each. */
  private static final KvLayout LAYOUT = KvLayout.opaque("m", 4, 4, 16);

  private static final long BLOCK = 16;
  private static final long LOCAL_BASE = 0x1000;
  private static final long REMOTE_BASE = 0x9000;

  private final StubTransport transport = new StubTransport();
  private final PreparedReads reads = new PreparedReads(ranks());
  private final TransferPlanner.RankPair pair = new TransferPlanner.RankPair(0, 0);

  private Ranks ranks() {
    Ranks ranks = new Ranks(List.of(transport));
    ranks.register(0, new KvRegions(LAYOUT, List.of(new StubMemory(LOCAL_BASE, BLOCK * 16))));
    return ranks;
  }

  private static final ProducerPeer PEER = TestLoads.oneRankProducer(LAYOUT, REMOTE_BASE);

  @Test
  void wholeBlocksGoByIndexAndAPartialTailIsDescribed() {
    Load.Posting posting = posting();
    // Six whole blocks (more than the initial room for indices) and five bytes of a seventh.
    TransferPlanner.Piece piece = new TransferPlanner.Piece(0, 0, 0, 2 * BLOCK, 6 * BLOCK + 5);

    reads.post(PEER, pair, List.of(piece), posting);

    assertThat(transport.indexedPosts).hasSize(1);
    assertThat(transport.indexedPosts.get(0).local()).containsExactly(2, 3, 4, 5, 6, 7);
    assertThat(transport.indexedPosts.get(0).remote()).containsExactly(0, 1, 2, 3, 4, 5);
    assertThat(transport.describedPosts)
        .containsExactly(
            new StubTransport.DescribedPost(
                List.of(new Descriptor(LOCAL_BASE + 8 * BLOCK, 5, 0)),
                "p0",
                List.of(new Descriptor(REMOTE_BASE + 6 * BLOCK, 5, 0))));
    assertThat(posting.reads()).hasSize(2);
    assertThat(posting.bytes()).isEqualTo(6 * BLOCK + 5);
    assertThat(posting.descriptors()).isEqualTo(7);
  }

  @Test
  void perLayerTensorsOfOneShapeAreReadByExtentIndexFromListsOfEveryRegion() {
    // Two layers of vLLM-style tensors [2, blocks, ...]: each block is four slabs, one extent each.
    KvLayout perLayer =
        new KvLayout("m", 1, 2, 2, 1, 0, 1, 4, 4, 8, KvLayout.MemoryOrder.BLOCK_MAJOR)
            .withMemory(KvLayout.MemoryOrder.BLOCK_MAJOR, KvLayout.Placement.PER_LAYER);
    long slab = perLayer.slabBytes();
    StubTransport local = new StubTransport();
    Ranks ranks = new Ranks(List.of(local));
    ranks.register(
        0,
        new KvRegions(
            perLayer,
            List.of(
                new StubMemory(0x10_000, perLayer.regionBytes()),
                new StubMemory(0x20_000, perLayer.regionBytes()))));
    ProducerPeer peer = TestLoads.oneRankProducer(perLayer, List.of(0x90_000L, 0xa0_000L));
    TransferPlanner.Request load =
        new TransferPlanner.Request(
            List.of(perLayer), List.of(perLayer), List.of(5, 2), List.of(1, 6), 8, 0);
    PreparedReads perLayerReads = new PreparedReads(ranks);
    Load.Posting posting = posting();

    perLayerReads.post(peer, pair, TransferPlanner.plan(load).get(pair), posting);

    // Extent index = region × 16 (2 planes × 8 blocks) + plane × 8 + block.
    assertThat(local.indexedPosts).hasSize(1);
    assertThat(local.indexedPosts.get(0).local()).containsExactly(1, 9, 17, 25, 6, 14, 22, 30);
    assertThat(local.indexedPosts.get(0).remote()).containsExactly(5, 13, 21, 29, 2, 10, 18, 26);
    assertThat(local.describedPosts).isEmpty();
    assertThat(posting.bytes()).isEqualTo(8 * slab);
    assertThat(posting.descriptors()).isEqualTo(8);
  }

  @Test
  void piecesOffBlockBoundariesAreDescribedWithoutAnIndexedRead() {
    Load.Posting posting = posting();

    reads.post(
        PEER,
        pair,
        List.of(
            new TransferPlanner.Piece(0, 3, 0, 3, 10), new TransferPlanner.Piece(0, 20, 0, 36, 4)),
        posting);

    assertThat(transport.indexedPosts).isEmpty();
    assertThat(transport.describedPosts).hasSize(1);
    assertThat(transport.describedPosts.get(0).local()).hasSize(2);
    assertThat(posting.reads()).hasSize(1);
    assertThat(posting.bytes()).isEqualTo(14);
    assertThat(posting.descriptors()).isEqualTo(2);
  }

  @Test
  void aRefusedPostReleasesTheListsItUsedAndTheNextReadPreparesThemAgain() {
    reads.post(PEER, pair, List.of(new TransferPlanner.Piece(0, 0, 0, 0, BLOCK)), posting());
    assertThat(transport.localPrepares).isEqualTo(1);
    assertThat(transport.remotePrepares).isEqualTo(1);
    transport.refuseNextIndexedPost = true;

    assertThatThrownBy(
            () ->
                reads.post(
                    PEER, pair, List.of(new TransferPlanner.Piece(0, 0, 0, 0, BLOCK)), posting()))
        .isInstanceOf(TransportException.class);

    assertThat(transport.released).extracting(PreparedList::id).containsExactlyInAnyOrder(1L, 2L);
    reads.post(PEER, pair, List.of(new TransferPlanner.Piece(0, 0, 0, 0, BLOCK)), posting());
    assertThat(transport.localPrepares).isEqualTo(2);
    assertThat(transport.remotePrepares).isEqualTo(2);
    assertThat(transport.indexedPosts).hasSize(2);
  }

  @Test
  void listsArePreparedOnceAndReleasedAtCloseAfterWhichAReadPreparesAfresh() {
    reads.post(PEER, pair, List.of(new TransferPlanner.Piece(0, 0, 0, 0, BLOCK)), posting());
    reads.post(
        PEER, pair, List.of(new TransferPlanner.Piece(0, BLOCK, 0, BLOCK, BLOCK)), posting());
    assertThat(transport.localPrepares).isEqualTo(1);
    assertThat(transport.remotePrepares).isEqualTo(1);

    reads.close();

    assertThat(transport.released).extracting(PreparedList::id).containsExactlyInAnyOrder(1L, 2L);
    reads.post(PEER, pair, List.of(new TransferPlanner.Piece(0, 0, 0, 0, BLOCK)), posting());
    assertThat(transport.localPrepares).isEqualTo(2);
    assertThat(transport.remotePrepares).isEqualTo(2);
  }

  @Test
  void aListThatFailsToReleaseDoesNotStopCloseReleasingTheRest() {
    reads.post(PEER, pair, List.of(new TransferPlanner.Piece(0, 0, 0, 0, BLOCK)), posting());
    transport.refuseReleases = true;

    reads.close();

    assertThat(transport.released).extracting(PreparedList::id).containsExactlyInAnyOrder(1L, 2L);
  }

  /** A load's posting with one stage begun, which the READs posted next move. */
  private static Load.Posting posting() {
    Load.Posting posting = new Load.Posting();
    posting.addStage(0, 1);
    posting.beginStage(posting.nextUnposted().orElseThrow());
    return posting;
  }
}
