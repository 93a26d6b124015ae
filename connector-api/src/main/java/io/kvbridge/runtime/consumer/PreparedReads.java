package io.kvbridge.runtime.consumer;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.runtime.engine.Ranks;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.KvRegions;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.PreparedList;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransportException;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Posts the READs of a load, one rank pair at a time, and keeps the descriptor lists this
 * consumer's ranks prepared to read whole blocks by index: per consumer rank, one list of every
 * extent of its KV memory (a block, or a block's piece of one layer in a per-layer placement:
 * {@link KvLayout#extentBytes()}); per (consumer rank, producer rank), one list of every extent of
 * that producer rank's regions, prepared from the producer's metadata of one incarnation. A read of
 * whole blocks between ranks of identical shape then costs the transport no description and no
 * check per extent.
 *
 * <p>A producer's lists are prepared on its first read and replaced when it comes back as another
 * incarnation (its agent's metadata was invalidated and reloaded, so the old lists are unusable);
 * lists whose post fails are dropped, to be prepared afresh by the next read. Every list is
 * released on {@link #close()}.
 *
 * <p>Threads: confined to the connector's lock.
 */
final class PreparedReads {

  private static final System.Logger LOG = System.getLogger(PreparedReads.class.getName());

  private final Ranks ranks;
  private final PreparedList[] local;
  private final Map<RemoteKey, Remote> remote = new HashMap<>();

  PreparedReads(Ranks ranks) {
    this.ranks = ranks;
    this.local = new PreparedList[ranks.count()];
  }

  /**
   * Posts a READ of producer rank {@code producerRank}'s extents {@code producerBlocks} into
   * consumer rank {@code consumerRank}'s extents {@code consumerBlocks}, position by position. The
   * two ranks' layouts must be of identical shape (the same bytes per extent).
   *
   * @throws TransportException if the transport refuses to prepare or post; the lists involved are
   *     dropped then
   */
  private TransferHandle read(
      int consumerRank,
      ProducerPeer peer,
      int producerRank,
      int[] consumerBlocks,
      int[] producerBlocks) {
    PreparedList mine = local(consumerRank);
    ProducerPeer.Rank theirs = peer.ranks().get(producerRank);
    RemoteKey key = new RemoteKey(consumerRank, theirs.agentName());
    Remote known = remote.get(key);
    if (known == null || !known.describes(peer.incarnation(), theirs)) {
      if (known != null) {
        releaseQuietly(consumerRank, known.list);
        remote.remove(key);
      }
      known = new Remote(peer.incarnation(), theirs, prepareRemote(consumerRank, theirs));
      remote.put(key, known);
    }
    try {
      return ranks
          .transport(consumerRank)
          .post(
              TransferOp.READ, mine, consumerBlocks, known.list, producerBlocks, Optional.empty());
    } catch (TransportException e) {
      forget(consumerRank, key);
      throw e;
    }
  }

  /**
   * Posts one (consumer rank, producer rank) pair's READs of a load from {@code peer}, adding them
   * to {@code posting}. Between ranks of identical shape, the whole blocks among the pieces are
   * read by block index from prepared lists; what is left (a partly filled last block, or every
   * piece between ranks of different shapes) is described piece by piece.
   */
  void post(
      ProducerPeer peer,
      TransferPlanner.RankPair pair,
      List<TransferPlanner.Piece> pieces,
      Load.Posting posting) {
    int rank = pair.consumerRank();
    KvRegions local = ranks.memory(rank);
    ProducerPeer.Rank remote = peer.ranks().get(pair.producerRank());
    List<TransferPlanner.Piece> described = pieces;
    if (TransferPlanner.sameShape(remote.layout(), ranks.layout(rank))) {
      WholeExtents whole = new WholeExtents(pieces.size(), remote.layout(), ranks.layout(rank));
      described = new ArrayList<>();
      for (TransferPlanner.Piece piece : pieces) {
        whole.take(piece).ifPresent(described::add);
      }
      if (whole.count > 0) {
        posting.add(
            new Load.Read(
                rank, read(rank, peer, pair.producerRank(), whole.consumer(), whole.producer())),
            (long) whole.count * remote.layout().extentBytes(),
            whole.count);
      }
    }
    if (!described.isEmpty()) {
      postDescribed(
          rank, remote, described, local.kind(), local::descriptor, Optional.empty(), posting);
    }
  }

  /**
   * Posts a staged pair's READ: its pieces (the producer's slabs) land in {@code staged}'s range,
   * whose copies are the pieces' {@link TransferPlanner.Pieces#scatter() scatter}.
   */
  void postStaged(
      ProducerPeer peer,
      TransferPlanner.RankPair pair,
      TransferPlanner.Pieces pieces,
      StagedRead staged,
      Load.Posting posting) {
    staged.scatter(
        pieces.scatter().orElseThrow(() -> new IllegalArgumentException("pieces are not staged")));
    postDescribed(
        pair.consumerRank(),
        peer.ranks().get(pair.producerRank()),
        pieces,
        staged.memory().kind(),
        staged::descriptor,
        Optional.of(staged),
        posting);
  }

  /** Where a piece's consumer offset lands, as a descriptor of local memory. */
  @FunctionalInterface
  private interface LocalPlace {
    Descriptor descriptor(long offset, long length);
  }

  private void postDescribed(
      int rank,
      ProducerPeer.Rank remote,
      List<TransferPlanner.Piece> described,
      MemoryKind localKind,
      LocalPlace local,
      Optional<StagedRead> staged,
      Load.Posting posting) {
    List<Descriptor> localPieces = new ArrayList<>(described.size());
    List<Descriptor> remotePieces = new ArrayList<>(described.size());
    long bytes = 0;
    for (TransferPlanner.Piece piece : described) {
      localPieces.add(local.descriptor(piece.consumerOffset(), piece.length()));
      remotePieces.add(remote.descriptor(piece.producerOffset(), piece.length()));
      bytes += piece.length();
    }
    posting.add(
        new Load.Read(
            rank,
            ranks
                .transport(rank)
                .post(
                    TransferOp.READ,
                    new DescriptorList(localKind, localPieces),
                    remote.agentName(),
                    new DescriptorList(remote.memoryKind(), remotePieces),
                    Optional.empty()),
            staged),
        bytes,
        described.size());
  }

  /**
   * The whole extents ({@link KvLayout#extentBytes()}: blocks, or a block's pieces of one layer)
   * among a pair's pieces, as indices into both sides' prepared lists, which list every extent of a
   * rank, region by region ({@link KvLayout#extentIndex}).
   */
  private static final class WholeExtents {
    private final KvLayout producerLayout;
    private final KvLayout consumerLayout;
    private int[] consumer;
    private int[] producer;
    private int count;

    WholeExtents(int capacity, KvLayout producerLayout, KvLayout consumerLayout) {
      this.producerLayout = producerLayout;
      this.consumerLayout = consumerLayout;
      consumer = new int[Math.max(capacity, 4)];
      producer = new int[consumer.length];
    }

    /**
     * Takes the whole extents {@code piece} starts with, if it starts where an extent does on both
     * sides; returns what is left of it, if anything.
     */
    Optional<TransferPlanner.Piece> take(TransferPlanner.Piece piece) {
      long extent = producerLayout.extentBytes();
      long p = producerLayout.extentIndex(piece.producerOffset());
      long c = consumerLayout.extentIndex(piece.consumerOffset());
      if (p < 0 || c < 0) {
        return Optional.of(piece);
      }
      // A piece never runs from one region into the next, and regions are extents back to back.
      long extents = piece.length() / extent;
      for (long e = 0; e < extents; e++) {
        add(Math.toIntExact(c + e), Math.toIntExact(p + e));
      }
      long rest = piece.length() - extents * extent;
      return rest == 0
          ? Optional.empty()
          : Optional.of(
              new TransferPlanner.Piece(
                  piece.producerRank(),
                  piece.producerOffset() + extents * extent,
                  piece.consumerRank(),
                  piece.consumerOffset() + extents * extent,
                  rest));
    }

    int[] consumer() {
      return Arrays.copyOf(consumer, count);
    }

    int[] producer() {
      return Arrays.copyOf(producer, count);
    }

    private void add(int consumerBlock, int producerBlock) {
      if (count == consumer.length) {
        consumer = Arrays.copyOf(consumer, count * 2);
        producer = Arrays.copyOf(producer, count * 2);
      }
      consumer[count] = consumerBlock;
      producer[count] = producerBlock;
      count++;
    }
  }

  /** Releases every prepared list. */
  void close() {
    remote.forEach((key, r) -> releaseQuietly(key.consumerRank(), r.list));
    remote.clear();
    for (int rank = 0; rank < local.length; rank++) {
      if (local[rank] != null) {
        releaseQuietly(rank, local[rank]);
        local[rank] = null;
      }
    }
  }

  private PreparedList local(int consumerRank) {
    if (local[consumerRank] == null) {
      KvRegions memory = ranks.memory(consumerRank);
      local[consumerRank] =
          ranks
              .transport(consumerRank)
              .prepare(
                  everyExtent(
                      memory.kind(),
                      memory.regions().stream().map(KvMemory::address).toList(),
                      memory.deviceId(),
                      memory.layout()));
    }
    return local[consumerRank];
  }

  private PreparedList prepareRemote(int consumerRank, ProducerPeer.Rank theirs) {
    KvLayout layout = theirs.layout();
    return ranks
        .transport(consumerRank)
        .prepare(
            theirs.agentName(),
            everyExtent(theirs.memoryKind(), theirs.regionAddresses(), theirs.deviceId(), layout));
  }

  private void forget(int consumerRank, RemoteKey key) {
    Remote dropped = remote.remove(key);
    if (dropped != null) {
      releaseQuietly(consumerRank, dropped.list);
    }
    if (local[consumerRank] != null) {
      releaseQuietly(consumerRank, local[consumerRank]);
      local[consumerRank] = null;
    }
  }

  private void releaseQuietly(int consumerRank, PreparedList list) {
    try {
      ranks.transport(consumerRank).release(list);
    } catch (TransportException e) {
      LOG.log(Level.DEBUG, "releasing " + list + ": " + e.getMessage());
    }
  }

  /** Every extent of a rank, region by region: index {@link KvLayout#extentIndex} is its own. */
  private static DescriptorList everyExtent(
      MemoryKind kind, List<Long> regions, int deviceId, KvLayout layout) {
    long extent = layout.extentBytes();
    long perRegion = layout.extentsPerRegion();
    List<Descriptor> extents = new ArrayList<>(Math.toIntExact(regions.size() * perRegion));
    for (long base : regions) {
      for (long e = 0; e < perRegion; e++) {
        extents.add(new Descriptor(base + e * extent, extent, deviceId));
      }
    }
    return new DescriptorList(kind, extents);
  }

  /** A producer rank's agent as one consumer rank reaches it. */
  private record RemoteKey(int consumerRank, String agentName) {}

  /** The list of a producer rank's blocks, and what it was prepared from. */
  private record Remote(long incarnation, ProducerPeer.Rank rank, PreparedList list) {
    boolean describes(long incarnation, ProducerPeer.Rank rank) {
      return this.incarnation == incarnation && this.rank.equals(rank);
    }
  }
}
