package io.kvbridge.tck.shapes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.lease.EndReason;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.ReadStaging;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.ForwardingTransport;
import io.kvbridge.transfer.KvRegions;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Pairs of every shape translate: each token of each head lands where the consumer's layout puts
 * it, a read moves only the used bytes, and a prefix the consumer holds is not read again beyond
 * whole blocks of both engines.
 */
public abstract class TranslatedShapeConformance extends ShapeTranslationFixture {

  /** These tests, run against {@code connector}. */
  protected TranslatedShapeConformance(ConnectorUnderTest connector) {
    super(connector);
  }

  static Stream<Arguments> shapes() {
    List<Arguments> all = new ArrayList<>();
    for (KvLayout.MemoryOrder order : KvLayout.MemoryOrder.values()) {
      for (int p : new int[] {1, 2, 4}) {
        for (int d : new int[] {1, 2, 4}) {
          for (int[] blocks : new int[][] {{8, 4}, {8, 8}, {4, 8}}) {
            all.add(Arguments.of(order, p, blocks[0], d, blocks[1]));
          }
        }
      }
    }
    return all.stream();
  }

  /**
   * A prompt of three blocks of the larger size and a partly filled fourth moves byte-exact from
   * every shape to every other: producer and consumer TP in {1, 2, 4}, consumer blocks half, equal
   * to and twice the producer's, both memory orders.
   */
  @ParameterizedTest(name = "{0}: P TP{1} x {2} tokens -> D TP{3} x {4} tokens")
  @MethodSource("shapes")
  void everyTokenOfEveryHeadLandsWhereTheConsumersLayoutPutsIt(
      KvLayout.MemoryOrder order,
      int producerTp,
      int producerBlock,
      int consumerTp,
      int consumerBlock) {
    movesEveryUsedByteOnceToWhereTheConsumerPutsIt(
        model(producerBlock, 32, order), producerTp, model(consumerBlock, 64, order), consumerTp);
  }

  /**
   * A prompt of three blocks of the larger size and a partly filled fourth, prefilled by an engine
   * of {@code producerModel} and {@code producerTp} ranks and loaded by one of {@code
   * consumerModel} and {@code consumerTp} ranks: it lands byte-exact, nothing else is written,
   * exactly its KV is read, and the lease ends READ.
   */
  private void movesEveryUsedByteOnceToWhereTheConsumerPutsIt(
      KvLayout producerModel, int producerTp, KvLayout consumerModel, int consumerTp) {
    // In place: a staged read moves whole spans of the producer's slabs, more than the used bytes
    // where a consumer rank takes some of a token's heads (aReadStagedThrough... covers staging).
    staging = new ReadStaging(ReadStaging.Mode.NEVER, ReadStaging.MIN_BYTES);
    Engine producer = start("prefill", Role.PRODUCER, producerModel, producerTp);
    Engine consumer = start("decode", Role.CONSUMER, consumerModel, consumerTp);
    int tokens = 3 * Math.max(producerModel.tokensPerBlock(), consumerModel.tokensPerBlock()) + 3;

    Transfer t = transfer(producer, consumer, "r-1", tokens, 0);

    assertThat(t.match()).isEqualTo(new LoadMatch.Ready(0, tokens));
    assertThat(consumer.received).contains("r-1");
    consumer.assertHolds(t, 0, tokens);
    consumer.assertUntouchedOutside(t);
    long bytesPerToken = (long) LAYERS * 2 * KV_HEADS * HEAD_DIM * DTYPE_BYTES;
    assertThat(consumer.connector.status().consumer().orElseThrow().bytesRead())
        .isEqualTo(tokens * bytesPerToken);
    await().atMost(underTest.patience()).until(() -> producer.step().sent.contains("r-1"));
    assertThat(producer.connector.status().producer().orElseThrow().leasesEnded())
        .containsEntry(EndReason.READ, 1L);
  }

  static Stream<Arguments> memoryShapes() {
    KvLayout.MemoryOrder nhd = KvLayout.MemoryOrder.BLOCK_MAJOR;
    KvLayout.MemoryOrder hnd = KvLayout.MemoryOrder.HEAD_MAJOR;
    KvLayout.Placement cross = KvLayout.Placement.CROSS_LAYER;
    KvLayout.Placement perLayer = KvLayout.Placement.PER_LAYER;
    KvLayout.Placement blockFirst = KvLayout.Placement.PER_LAYER_BLOCK_FIRST;
    KvLayout.Placement perPlane = KvLayout.Placement.PER_LAYER_PLANE;
    List<Arguments> all = new ArrayList<>();
    for (int[] tp : new int[][] {{2, 2}, {2, 1}, {1, 2}}) {
      for (int[] blocks : new int[][] {{8, 8}, {8, 4}}) {
        // vLLM FlashAttention per layer, NHD, on both sides: whole blocks by extent.
        all.add(Arguments.of(perLayer, nhd, tp[0], blocks[0], perLayer, nhd, tp[1], blocks[1]));
        // vLLM per layer NHD into a cross-layer HND engine: vector by vector.
        all.add(Arguments.of(perLayer, nhd, tp[0], blocks[0], cross, hnd, tp[1], blocks[1]));
        // FlashInfer HND into separate K and V tensors per layer, NHD.
        all.add(Arguments.of(blockFirst, hnd, tp[0], blocks[0], perPlane, nhd, tp[1], blocks[1]));
        // Separate K and V tensors on both sides, HND.
        all.add(Arguments.of(perPlane, hnd, tp[0], blocks[0], perPlane, hnd, tp[1], blocks[1]));
      }
    }
    return all.stream();
  }

  /**
   * Engines that keep their KV in different memory shapes pair: one tensor per layer (vLLM's
   * FlashAttention layout), FlashInfer's, separate K and V tensors per layer and cross-layer
   * blocks, in either order, registered as one region per tensor; every vector lands where the
   * consumer's layout puts it and only the used bytes move.
   */
  @ParameterizedTest(name = "P {0}/{1} TP{2} x {3} -> D {4}/{5} TP{6} x {7}")
  @MethodSource("memoryShapes")
  void engineMemoryOfAnyPlacementAndOrderPairsVectorForVector(
      KvLayout.Placement producerPlacement,
      KvLayout.MemoryOrder producerOrder,
      int producerTp,
      int producerBlock,
      KvLayout.Placement consumerPlacement,
      KvLayout.MemoryOrder consumerOrder,
      int consumerTp,
      int consumerBlock) {
    movesEveryUsedByteOnceToWhereTheConsumerPutsIt(
        model(producerBlock, 32, producerOrder).withMemory(producerOrder, producerPlacement),
        producerTp,
        model(consumerBlock, 64, consumerOrder).withMemory(consumerOrder, consumerPlacement),
        consumerTp);
  }

  static Stream<Arguments> stagedShapes() {
    List<Arguments> all = new ArrayList<>();
    for (KvLayout.Placement placement :
        new KvLayout.Placement[] {KvLayout.Placement.CROSS_LAYER, KvLayout.Placement.PER_LAYER}) {
      for (int[] tp : new int[][] {{1, 2}, {2, 1}, {1, 4}, {4, 2}}) {
        for (int[] blocks : new int[][] {{8, 8}, {8, 4}, {4, 8}}) {
          all.add(Arguments.of(placement, tp[0], blocks[0], tp[1], blocks[1]));
        }
      }
    }
    return all.stream();
  }

  /**
   * Block-major engines whose ranks split a token's heads differently read through the consumer's
   * staging area when it stages them (here always): every READ lands in the staging area, none in
   * the KV memory, and every vector still lands where the consumer's layout puts it, nothing else
   * written, the lease ending READ.
   */
  @ParameterizedTest(name = "{0}: P TP{1} x {2} tokens -> D TP{3} x {4} tokens, staged")
  @MethodSource("stagedShapes")
  void aReadStagedThroughTheConsumersStagingAreaLandsEveryVectorInPlace(
      KvLayout.Placement placement,
      int producerTp,
      int producerBlock,
      int consumerTp,
      int consumerBlock) {
    KvLayout.MemoryOrder nhd = KvLayout.MemoryOrder.BLOCK_MAJOR;
    List<DescriptorList> landings = new CopyOnWriteArrayList<>();
    Engine producer =
        start(
            "prefill",
            Role.PRODUCER,
            model(producerBlock, 32, nhd).withMemory(nhd, placement),
            producerTp);
    staging = new ReadStaging(ReadStaging.Mode.ALWAYS, ReadStaging.MIN_BYTES);
    Engine consumer =
        start(
            "decode",
            Role.CONSUMER,
            model(consumerBlock, 64, nhd).withMemory(nhd, placement),
            consumerTp,
            transport -> new LandingRecorder(transport, landings));
    int tokens = 3 * Math.max(producerBlock, consumerBlock) + 3;

    Transfer t = transfer(producer, consumer, "r-1", tokens, 0);

    assertThat(t.match()).isEqualTo(new LoadMatch.Ready(0, tokens));
    assertThat(consumer.received).contains("r-1");
    consumer.assertHolds(t, 0, tokens);
    consumer.assertUntouchedOutside(t);
    long bytesPerToken = (long) LAYERS * 2 * KV_HEADS * HEAD_DIM * DTYPE_BYTES;
    assertThat(consumer.connector.status().consumer().orElseThrow().bytesRead())
        .as("whole spans of the producer's slabs: at least the used bytes")
        .isGreaterThanOrEqualTo(tokens * bytesPerToken);
    assertThat(landings).isNotEmpty();
    for (DescriptorList landing : landings) {
      for (Descriptor piece : landing.descriptors()) {
        assertThat(consumer.memories)
            .as("a staged READ lands in the staging area, not in KV memory")
            .noneSatisfy(
                rank ->
                    assertThat(rank.regions())
                        .anySatisfy(
                            region ->
                                assertThat(piece.within(region.address(), region.sizeBytes()))
                                    .isTrue()));
      }
    }
    await().atMost(underTest.patience()).until(() -> producer.step().sent.contains("r-1"));
    assertThat(producer.connector.status().producer().orElseThrow().leasesEnded())
        .containsEntry(EndReason.READ, 1L);
  }

  /**
   * A read larger than the consumer's staging area is staged in waves: stages that find no room
   * wait until earlier stages were copied into place and gave theirs back, so every READ still
   * lands in the staging area (together more than the area holds) and every vector in place.
   */
  @Test
  void aReadLargerThanTheStagingAreaIsStagedInWavesAsEarlierStagesGiveTheirRoomBack() {
    KvLayout large = largerThanTheStagingArea();
    List<DescriptorList> landings = new CopyOnWriteArrayList<>();
    Engine producer = start("prefill", Role.PRODUCER, large, 2);
    staging = new ReadStaging(ReadStaging.Mode.ALWAYS, ReadStaging.MIN_BYTES);
    Engine consumer =
        start(
            "decode",
            Role.CONSUMER,
            large,
            1,
            transport -> new LandingRecorder(transport, landings));
    int tokens = 4_096;

    Transfer t = transfer(producer, consumer, "r-1", tokens, 0);

    assertThat(consumer.received).contains("r-1");
    consumer.assertHolds(t, 0, tokens);
    assertThat(stagedBytes(consumer, landings))
        .isEqualTo(64L << 20)
        .isGreaterThan(ReadStaging.MIN_BYTES);
  }

  /**
   * A staged read that fails (here a READ its transport refuses, with earlier stages holding
   * staging ranges) gives every range back: none is in use once it failed, and the next read is
   * staged whole again.
   */
  @Test
  void aStagedReadThatFailsGivesItsStagingRangesBack() {
    KvLayout large = largerThanTheStagingArea();
    List<DescriptorList> landings = new CopyOnWriteArrayList<>();
    AtomicInteger refuseAtPost = new AtomicInteger(3);
    Engine producer = start("prefill", Role.PRODUCER, large, 2);
    staging = new ReadStaging(ReadStaging.Mode.ALWAYS, ReadStaging.MIN_BYTES);
    Engine consumer =
        start(
            "decode",
            Role.CONSUMER,
            large,
            1,
            transport -> new LandingRecorder(transport, landings, refuseAtPost));
    int tokens = 4_096;

    transfer(producer, consumer, "r-1", tokens, 0);

    assertThat(consumer.failed).containsKey("r-1");
    assertThat(consumer.connector.status().consumer().orElseThrow().stagingBytesInUse()).isZero();
    landings.clear();
    Transfer t = transfer(producer, consumer, "r-2", 2_048, 0);
    assertThat(consumer.received).contains("r-2");
    consumer.assertHolds(t, 0, 2_048);
    assertThat(stagedBytes(consumer, landings)).isEqualTo(32L << 20);
    assertThat(consumer.connector.status().consumer().orElseThrow().stagingBytesInUse()).isZero();
  }

  /** 16 KiB a token over both producer ranks: 4,096 tokens are 64 MiB, twice the staging area. */
  private static KvLayout largerThanTheStagingArea() {
    return new KvLayout(
        MODEL,
        DTYPE_BYTES,
        LAYERS,
        2,
        KV_HEADS,
        0,
        KV_HEADS,
        512,
        16,
        800, // two requests' blocks, as the fixture hands them out (every other one)
        KvLayout.MemoryOrder.BLOCK_MAJOR);
  }

  /** The bytes of {@code landings}, each of which lies outside the consumer's KV memory. */
  private static long stagedBytes(Engine consumer, List<DescriptorList> landings) {
    KvRegions kv = consumer.memories.get(0);
    long staged = 0;
    for (DescriptorList landing : landings) {
      for (Descriptor piece : landing.descriptors()) {
        assertThat(kv.regions())
            .as("a staged READ lands in the staging area, not in KV memory")
            .noneSatisfy(
                region -> assertThat(piece.within(region.address(), region.sizeBytes())).isTrue());
      }
      staged += landing.totalBytes();
    }
    return staged;
  }

  /**
   * Records where each READ a consumer rank posts lands (its local descriptors), and refuses the
   * READ posted when {@code refuseAtPost} counts down to 0.
   */
  private static final class LandingRecorder extends ForwardingTransport {
    private final List<DescriptorList> landings;
    private final AtomicInteger refuseAtPost;

    LandingRecorder(Transport delegate, List<DescriptorList> landings) {
      this(delegate, landings, new AtomicInteger(-1));
    }

    LandingRecorder(Transport delegate, List<DescriptorList> landings, AtomicInteger refuseAtPost) {
      super(delegate);
      this.landings = landings;
      this.refuseAtPost = refuseAtPost;
    }

    @Override
    public TransferHandle post(
        TransferOp op,
        DescriptorList local,
        String remoteAgent,
        DescriptorList remote,
        Optional<byte[]> notification) {
      if (op == TransferOp.READ && refuseAtPost.decrementAndGet() == 0) {
        throw new TransportException("READ refused by the test");
      }
      if (op == TransferOp.READ) {
        landings.add(local);
      }
      return super.post(op, local, remoteAgent, remote, notification);
    }
  }

  static Stream<Arguments> replicatedShapes() {
    List<Arguments> all = new ArrayList<>();
    // An MLA latent: one "head" every rank holds, P and D TP in {1, 2, 4, 8} both ways.
    KvLayout.Placement cross = KvLayout.Placement.CROSS_LAYER;
    for (int p : new int[] {1, 2, 4, 8}) {
      for (int d : new int[] {1, 2, 4, 8}) {
        all.add(Arguments.of("MLA latent", 1, 1, p, d, cross));
      }
    }
    // An MLA latent per layer, [blocks, block_size, latent] as one tensor per layer.
    KvLayout.Placement perLayer = KvLayout.Placement.PER_LAYER_BLOCK_FIRST;
    all.add(Arguments.of("MLA latent per layer", 1, 1, 2, 4, perLayer));
    all.add(Arguments.of("MLA latent per layer", 1, 1, 8, 1, perLayer));
    // GQA with fewer KV heads than ranks: 2 heads, each on several ranks.
    all.add(Arguments.of("2 KV heads", 2, 2, 4, 8, cross));
    all.add(Arguments.of("2 KV heads", 2, 2, 8, 4, cross));
    all.add(Arguments.of("2 KV heads", 2, 2, 1, 8, cross));
    all.add(Arguments.of("2 KV heads", 2, 2, 8, 2, cross));
    all.add(Arguments.of("2 KV heads per layer", 2, 2, 4, 8, KvLayout.Placement.PER_LAYER));
    return all.stream();
  }

  /**
   * KV that several ranks hold (an MLA latent on every rank, or GQA heads on more ranks than there
   * are heads) moves byte-exact to every consumer rank that holds it, each consumer rank reading
   * its heads once, from one of the producer ranks that hold them.
   */
  @ParameterizedTest(name = "{0}: P TP{3} -> D TP{4}")
  @MethodSource("replicatedShapes")
  void replicatedKvReachesEveryConsumerRankThatHoldsItReadOnce(
      String what,
      int planes,
      int kvHeads,
      int producerTp,
      int consumerTp,
      KvLayout.Placement placement) {
    KvLayout.MemoryOrder order = KvLayout.MemoryOrder.HEAD_MAJOR;
    KvLayout producerModel = replicated(planes, kvHeads, 8, 32, order).withMemory(order, placement);
    Engine producer = start("prefill", Role.PRODUCER, producerModel, producerTp);
    Engine consumer =
        start(
            "decode",
            Role.CONSUMER,
            replicated(planes, kvHeads, 4, 64, order).withMemory(order, placement),
            consumerTp);
    int tokens = 27;

    Transfer t = transfer(producer, consumer, "r-1", tokens, 0);

    assertThat(t.match()).isEqualTo(new LoadMatch.Ready(0, tokens));
    consumer.assertHolds(t, 0, tokens);
    consumer.assertUntouchedOutside(t);
    long perRankToken = (long) producerModel.forRank(0, consumerTp).blockBytes() / 8;
    assertThat(consumer.connector.status().consumer().orElseThrow().bytesRead())
        .as("every consumer rank reads its heads once")
        .isEqualTo(tokens * perRankToken * consumerTp);
    await().atMost(underTest.patience()).until(() -> producer.step().sent.contains("r-1"));
    assertThat(producer.connector.status().producer().orElseThrow().leasesEnded())
        .containsEntry(EndReason.READ, 1L);
  }

  private static KvLayout replicated(
      int planes, int kvHeads, int tokensPerBlock, int blockCount, KvLayout.MemoryOrder order) {
    return new KvLayout(
        MODEL + (planes == 1 ? "-mla" : "-gqa"),
        DTYPE_BYTES,
        LAYERS,
        planes,
        kvHeads,
        0,
        kvHeads,
        planes == 1 ? 4 * HEAD_DIM : HEAD_DIM,
        tokensPerBlock,
        blockCount,
        order);
  }

  /** The bytes a read moves are the used bytes of the blocks it reads, nothing more. */
  @Test
  void theReadMovesOnlyTheUsedBytesOfThePartlyFilledLastBlock() {
    KvLayout.MemoryOrder order = KvLayout.MemoryOrder.HEAD_MAJOR;
    Engine producer = start("prefill", Role.PRODUCER, model(8, 32, order), 2);
    Engine consumer = start("decode", Role.CONSUMER, model(16, 64, order), 1);

    transfer(producer, consumer, "r-1", 19, 0);

    long bytesPerToken = (long) LAYERS * 2 * KV_HEADS * HEAD_DIM * DTYPE_BYTES;
    assertThat(consumer.connector.status().consumer().orElseThrow().bytesRead())
        .isEqualTo(19 * bytesPerToken);
  }

  static Stream<Arguments> prefixHits() {
    // (producer block, consumer block, tokens, local tokens, first token read)
    return Stream.of(
        Arguments.of(8, 8, 35, 0, 0),
        Arguments.of(8, 8, 35, 16, 16),
        Arguments.of(8, 8, 35, 20, 16),
        Arguments.of(8, 4, 35, 12, 8),
        Arguments.of(4, 8, 35, 24, 24),
        Arguments.of(8, 16, 35, 8, 0),
        Arguments.of(16, 8, 35, 32, 32));
  }

  /**
   * With part of the prompt held locally the consumer reads only what it lacks, from the local
   * prefix rounded down to whole blocks of both engines, and writes nothing before that.
   */
  @ParameterizedTest(name = "P x {0}, D x {1}: {2} tokens, {3} local -> read from {4}")
  @MethodSource("prefixHits")
  void aLocalPrefixIsNotReadAgainBeyondWholeBlocksOfBothEngines(
      int producerBlock, int consumerBlock, int tokens, int localTokens, int firstRead) {
    KvLayout.MemoryOrder order = KvLayout.MemoryOrder.HEAD_MAJOR;
    Engine producer = start("prefill", Role.PRODUCER, model(producerBlock, 32, order), 2);
    Engine consumer = start("decode", Role.CONSUMER, model(consumerBlock, 64, order), 2);

    Transfer t = transfer(producer, consumer, "r-1", tokens, localTokens);

    assertThat(t.match()).isEqualTo(new LoadMatch.Ready(firstRead, tokens - firstRead));
    consumer.assertHolds(t, firstRead, tokens);
    consumer.assertUntouched(t, 0, firstRead);
    consumer.assertUntouchedOutside(t);
  }

  /**
   * When the consumer holds every token of the lease, nothing is read and the producer frees the
   * lease at once.
   */
  @Test
  void aConsumerHoldingEveryTokenReadsNothingAndReleasesTheLease() {
    KvLayout.MemoryOrder order = KvLayout.MemoryOrder.BLOCK_MAJOR;
    Engine producer = start("prefill", Role.PRODUCER, model(8, 32, order), 2);
    Engine consumer = start("decode", Role.CONSUMER, model(16, 64, order), 4);
    TransferParams params = producer.prefill("r-1", 20);

    LoadMatch match = consumer.match("r-1", params, 20);

    assertThat(match).isEqualTo(new LoadMatch.Ready(20, 0));
    await().atMost(underTest.patience()).until(() -> producer.step().sent.contains("r-1"));
    assertThat(producer.connector.status().producer().orElseThrow().leasesEnded())
        .containsEntry(EndReason.RELEASED, 1L);
    assertThat(consumer.connector.status().consumer().orElseThrow().bytesRead()).isZero();
  }
}
