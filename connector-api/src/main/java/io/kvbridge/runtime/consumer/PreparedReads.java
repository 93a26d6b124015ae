package io.kvbridge.runtime.consumer;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.runtime.engine.Ranks;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
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
 * block of its KV memory; per (consumer rank, producer rank), one list of every block of that
 * producer rank's region, prepared from the producer's metadata of one incarnation. A read of whole
 * blocks between ranks of identical shape then costs the transport no description and no check per
 * block.
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
   * Posts a READ of producer rank {@code producerRank}'s blocks {@code producerBlocks} into
   * consumer rank {@code consumerRank}'s blocks {@code consumerBlocks}, position by position. The
   * two ranks' layouts must be of identical shape (the same bytes per block).
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
    KvMemory local = ranks.memory(rank);
    ProducerPeer.Rank remote = peer.ranks().get(pair.producerRank());
    List<TransferPlanner.Piece> described = pieces;
    if (TransferPlanner.sameShape(remote.layout(), ranks.layout(rank))) {
      long block = remote.layout().blockBytes();
      WholeBlocks whole = new WholeBlocks(pieces.size());
      described = new ArrayList<>();
      for (TransferPlanner.Piece piece : pieces) {
        whole.take(piece, block).ifPresent(described::add);
      }
      if (whole.count > 0) {
        posting.add(
            new Load.Read(
                rank, read(rank, peer, pair.producerRank(), whole.consumer(), whole.producer())),
            whole.count * block,
            whole.count);
      }
    }
    if (described.isEmpty()) {
      return;
    }
    List<Descriptor> localPieces = new ArrayList<>(described.size());
    List<Descriptor> remotePieces = new ArrayList<>(described.size());
    long bytes = 0;
    for (TransferPlanner.Piece piece : described) {
      localPieces.add(
          new Descriptor(
              local.address() + piece.consumerOffset(), piece.length(), local.deviceId()));
      remotePieces.add(
          new Descriptor(
              remote.regionAddress() + piece.producerOffset(), piece.length(), remote.deviceId()));
      bytes += piece.length();
    }
    posting.add(
        new Load.Read(
            rank,
            ranks
                .transport(rank)
                .post(
                    TransferOp.READ,
                    new DescriptorList(local.kind(), localPieces),
                    remote.agentName(),
                    new DescriptorList(remote.memoryKind(), remotePieces),
                    Optional.empty())),
        bytes,
        described.size());
  }

  /** The whole blocks among a pair's pieces, as block indices on both sides. */
  private static final class WholeBlocks {
    private int[] consumer;
    private int[] producer;
    private int count;

    WholeBlocks(int capacity) {
      consumer = new int[Math.max(capacity, 4)];
      producer = new int[consumer.length];
    }

    /**
     * Takes the whole blocks {@code piece} starts with, if it starts on a block boundary on both
     * sides; returns what is left of it, if anything.
     */
    Optional<TransferPlanner.Piece> take(TransferPlanner.Piece piece, long block) {
      if (piece.producerOffset() % block != 0 || piece.consumerOffset() % block != 0) {
        return Optional.of(piece);
      }
      long blocks = piece.length() / block;
      for (long b = 0; b < blocks; b++) {
        add(
            Math.toIntExact(piece.consumerOffset() / block + b),
            Math.toIntExact(piece.producerOffset() / block + b));
      }
      long rest = piece.length() - blocks * block;
      return rest == 0
          ? Optional.empty()
          : Optional.of(
              new TransferPlanner.Piece(
                  piece.producerRank(),
                  piece.producerOffset() + blocks * block,
                  piece.consumerRank(),
                  piece.consumerOffset() + blocks * block,
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
      KvMemory memory = ranks.memory(consumerRank);
      KvLayout layout = ranks.layout(consumerRank);
      local[consumerRank] =
          ranks
              .transport(consumerRank)
              .prepare(
                  everyBlock(
                      memory.kind(),
                      memory.address(),
                      memory.deviceId(),
                      layout.blockBytes(),
                      layout.blockCount()));
    }
    return local[consumerRank];
  }

  private PreparedList prepareRemote(int consumerRank, ProducerPeer.Rank theirs) {
    KvLayout layout = theirs.layout();
    return ranks
        .transport(consumerRank)
        .prepare(
            theirs.agentName(),
            everyBlock(
                theirs.memoryKind(),
                theirs.regionAddress(),
                theirs.deviceId(),
                layout.blockBytes(),
                layout.blockCount()));
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

  private static DescriptorList everyBlock(
      MemoryKind kind, long base, int deviceId, long blockBytes, int blockCount) {
    List<Descriptor> blocks = new ArrayList<>(blockCount);
    for (int b = 0; b < blockCount; b++) {
      blocks.add(new Descriptor(base + b * blockBytes, blockBytes, deviceId));
    }
    return new DescriptorList(kind, blocks);
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
