package io.kvbridge.benchmarks.transfer;

import io.kvbridge.fake.FakeFabric;
import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.nixl.MemoryMode;
import io.kvbridge.nixl.NixlBackend;
import io.kvbridge.nixl.NixlOptions;
import io.kvbridge.runtime.consumer.ReadPlan;
import io.kvbridge.runtime.consumer.StagingModel;
import io.kvbridge.runtime.engine.BlockChecksums;
import io.kvbridge.spi.ReadStaging;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.KvRegions;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * A {@link PlannedRequest} read through a transport as the consumer reads it: one agent per rank on
 * each side, each rank's pool in the regions its layout places slabs in ({@link
 * KvLayout#regions()}: one for a cross-layer layout, one per layer or per layer and plane
 * otherwise), every region registered with the rank's agent, and per request one READ per (consumer
 * rank, producer rank) pair of the plan, with the plan's descriptors resolved through each rank's
 * {@link KvRegions}. The descriptor lists are built once, so a request times the transport alone:
 * post every READ, poll each until DONE, release them, as the consumer's worker side does.
 *
 * <p>Threads: confined to one benchmark thread (the transport may copy on threads of its own).
 */
public final class PlannedRead implements AutoCloseable {

  /**
   * The longest {@link PlanShape} prompt read: both sides' single regions of it must fit in the
   * heap together.
   */
  public static final int MAX_TOKENS = 8_192;

  private final PlannedRequest request;
  private final List<Transport> producers = new ArrayList<>();
  private final List<Transport> consumers = new ArrayList<>();
  private final List<KvRegions> producerMemory = new ArrayList<>();
  private final List<KvRegions> consumerMemory = new ArrayList<>();
  private final List<Posting> postings = new ArrayList<>();
  private final List<KvMemory> staging = new ArrayList<>();
  private final ReadPlan plan;
  private final long descriptors;

  /**
   * One READ: its lists, and for a staged READ the staging memory it lands in and the plan's READ,
   * whose copies put the rows in place once it is done.
   */
  private record Posting(
      Transport consumer,
      DescriptorList local,
      String producer,
      DescriptorList remote,
      Optional<KvMemory> staging,
      ReadPlan.Read read) {}

  /**
   * A {@link PlanShape}'s request over one {@link FakeFabric}: host memory on the Java heap.
   *
   * @throws IllegalArgumentException past {@value #MAX_TOKENS} tokens
   */
  public PlannedRead(PlanShape shape) {
    this(fitsTheHeap(shape), new FakeFabric()::join, StagingModel.NEVER);
  }

  /**
   * Creates agents with {@code agents} (given each agent's name), allocates and registers both
   * sides' regions, fills the producer's with random bytes and builds the descriptor lists of the
   * plan a consumer weighing staging by {@code staging} makes: a staged READ lands in staging
   * memory of its own, allocated and registered on the consumer rank's agent.
   */
  public PlannedRead(
      PlannedRequest request, Function<String, Transport> agents, StagingModel staging) {
    this.request = request;
    List<KvLayout> producerLayouts = request.producer();
    List<KvLayout> consumerLayouts = request.consumer();
    for (int q = 0; q < producerLayouts.size(); q++) {
      Transport agent = agents.apply("prefill-" + q);
      producers.add(agent);
      KvRegions regions = allocate(agent, producerLayouts.get(q));
      producerMemory.add(regions);
      for (int i = 0; i < regions.regions().size(); i++) {
        ReadPair.fillRandom(regions.regions().get(i), 42 + 1_000 * q + i);
      }
    }
    List<List<String>> names = new ArrayList<>();
    for (int r = 0; r < consumerLayouts.size(); r++) {
      Transport agent = agents.apply("decode-" + r);
      consumers.add(agent);
      consumerMemory.add(allocate(agent, consumerLayouts.get(r)));
      List<String> loaded = new ArrayList<>();
      for (Transport producer : producers) {
        loaded.add(agent.loadRemoteMetadata(producer.localMetadata()));
      }
      names.add(loaded);
    }
    this.plan = request.plan(staging);
    long count = 0;
    for (ReadPlan.Read read : plan.reads()) {
      Transport agent = consumers.get(read.consumerRank());
      KvRegions remote = producerMemory.get(read.producerRank());
      Optional<KvMemory> landing = Optional.empty();
      if (read.staged()) {
        KvMemory memory = agent.allocate(Math.max(1, read.stagingBytes()));
        agent.register(memory);
        this.staging.add(memory);
        landing = Optional.of(memory);
      }
      KvRegions kv = consumerMemory.get(read.consumerRank());
      Optional<KvMemory> into = landing;
      List<Descriptor> localPieces = new ArrayList<>(read.descriptors());
      List<Descriptor> remotePieces = new ArrayList<>(read.descriptors());
      read.forEachDescriptor(
          (producerOffset, consumerOffset, length) -> {
            localPieces.add(
                into.map(m -> new Descriptor(m.address() + consumerOffset, length, m.deviceId()))
                    .orElseGet(() -> kv.descriptor(consumerOffset, length)));
            remotePieces.add(remote.descriptor(producerOffset, length));
          });
      count += localPieces.size();
      postings.add(
          new Posting(
              agent,
              new DescriptorList(kv.kind(), localPieces),
              names.get(read.consumerRank()).get(read.producerRank()),
              new DescriptorList(remote.kind(), remotePieces),
              landing,
              read));
    }
    this.descriptors = count;
  }

  /** A request over one {@link FakeFabric}: host memory on the Java heap; read in place. */
  public static PlannedRead overFake(PlannedRequest request) {
    return overFake(request, StagingModel.NEVER);
  }

  /** A request over one {@link FakeFabric}, staged where {@code staging} says. */
  public static PlannedRead overFake(PlannedRequest request, StagingModel staging) {
    return new PlannedRead(request, new FakeFabric()::join, staging);
  }

  /**
   * A request over NIXL agents in this JVM with host memory and the connector's defaults, staged
   * where {@code staging} says.
   */
  public static PlannedRead overNixlHostMemory(PlannedRequest request, StagingModel staging) {
    return new PlannedRead(request, PlannedRead::nixlHostAgent, staging);
  }

  /** A NIXL agent with host memory and the connector's defaults. */
  static Transport nixlHostAgent(String name) {
    return NixlBackend.transport(name, NixlOptions.defaults().withMemory(MemoryMode.DRAM));
  }

  private static PlanShape fitsTheHeap(PlanShape shape) {
    if (shape.tokens() > MAX_TOKENS) {
      throw new IllegalArgumentException(
          "a planned read holds both sides' KV in this heap: at most "
              + MAX_TOKENS
              + " tokens, got "
              + shape.tokens());
    }
    return shape;
  }

  private static KvRegions allocate(Transport agent, KvLayout layout) {
    List<KvMemory> regions = new ArrayList<>(layout.regions());
    for (int i = 0; i < layout.regions(); i++) {
      KvMemory memory = agent.allocate(layout.regionBytes());
      agent.register(memory);
      regions.add(memory);
    }
    return new KvRegions(layout, regions);
  }

  /** The request read. */
  public PlannedRequest shape() {
    return request;
  }

  /**
   * One request: every READ posted, then each polled (spinning) until DONE and, if staged, its rows
   * copied into place, then all released.
   *
   * @throws TransportException if a READ fails
   */
  public void read() {
    TransferHandle[] handles = new TransferHandle[postings.size()];
    for (int i = 0; i < handles.length; i++) {
      Posting p = postings.get(i);
      handles[i] = p.consumer().post(TransferOp.READ, p.local(), p.producer(), p.remote(), NONE);
    }
    String failure = null;
    for (int i = 0; i < handles.length; i++) {
      Transport consumer = postings.get(i).consumer();
      TransferStatus status;
      while ((status = consumer.status(handles[i])) instanceof TransferStatus.InProgress) {
        Thread.onSpinWait();
      }
      if (status instanceof TransferStatus.Failed failed && failure == null) {
        failure = "READ " + handles[i].id() + " failed: " + failed.reason();
      }
      if (failure == null) {
        scatter(postings.get(i));
      }
    }
    for (int i = 0; i < handles.length; i++) {
      postings.get(i).consumer().release(handles[i]);
    }
    if (failure != null) {
      throw new TransportException(failure);
    }
  }

  /** Copies a staged READ's rows from its staging memory into the consumer rank's KV memory. */
  private void scatter(Posting posting) {
    posting
        .staging()
        .ifPresent(
            from -> {
              KvRegions kv = consumerMemory.get(posting.read().consumerRank());
              posting
                  .read()
                  .forEachCopy(
                      (source, sourcePitch, target, targetPitch, width, rows) ->
                          from.copyRows(
                              source,
                              sourcePitch,
                              kv.regionAt(target),
                              KvLayout.inRegion(target),
                              targetPitch,
                              width,
                              rows));
            });
  }

  /** The plan read. */
  public ReadPlan plan() {
    return plan;
  }

  /** The READs of a request that land in staging memory. */
  public long stagedReads() {
    return postings.stream().filter(p -> p.staging().isPresent()).count();
  }

  /** The bytes a request's READs move: the staged ones' whole spans included. */
  public long bytesMoved() {
    return postings.stream().mapToLong(p -> p.local().totalBytes()).sum();
  }

  /**
   * The consumer's content check left once the last READ finished: CRC-32C, on every consumer rank,
   * of the blocks of the last stage the consumer posts the read in ({@link ReadPlan#stageBounds}:
   * the earlier stages are checked while later ones still move), over the bytes their used tokens
   * occupy ({@link BlockChecksums}), read in place. Both sides' blocks hold the same tokens (equal
   * block sizes), so a stage's producer blocks are the consumer's of the same indices. Returns the
   * checksums folded into one value.
   */
  public int checkContent() {
    int[] stage = lastStage();
    List<Integer> blocks = request.consumerBlocks().subList(stage[0], stage[1]);
    int tokensPerBlock = request.consumer().get(0).tokensPerBlock();
    int tokens = request.tokens() - stage[0] * tokensPerBlock;
    int folded = 0;
    for (KvRegions regions : consumerMemory) {
      for (int checksum : BlockChecksums.of(ChecksumScheme.CRC32C, regions, blocks, tokens)) {
        folded = 31 * folded + checksum;
      }
    }
    return folded;
  }

  /**
   * The block indices {@code [from, to)} of the last stage the consumer posts this request's read
   * in, and how many stages there are.
   */
  public int[] lastStage() {
    if (request.producer().get(0).tokensPerBlock() != request.consumer().get(0).tokensPerBlock()) {
      throw new IllegalStateException("the staged check is measured for equal block sizes");
    }
    int blocks = request.producerBlocks().size();
    int[] bounds =
        ReadPlan.stageBounds(
            request.producer(),
            0,
            blocks,
            ReadPlan.MIN_STAGE_BYTES,
            ReadPlan.maxStageBytes(ReadStaging.DEFAULT));
    return new int[] {bounds[bounds.length - 2], bounds[bounds.length - 1], bounds.length - 1};
  }

  /**
   * Whether every descriptor's range on the consumer holds the bytes of its range on the producer:
   * checks the first and the last descriptor of every READ.
   */
  public boolean consumerHoldsTheProducersBytes() {
    for (Posting p : postings) {
      List<Descriptor> local = p.local().descriptors();
      List<Descriptor> remote = p.remote().descriptors();
      for (int i : new int[] {0, local.size() - 1}) {
        if (!same(local.get(i), remote.get(i))) {
          return false;
        }
      }
      if (!copiedInPlace(p)) {
        return false;
      }
    }
    return true;
  }

  /** Whether every row a staged READ's copies moved holds its staged bytes in KV memory. */
  private boolean copiedInPlace(Posting p) {
    if (p.staging().isEmpty()) {
      return true;
    }
    KvMemory from = p.staging().get();
    KvRegions kv = consumerMemory.get(p.read().consumerRank());
    boolean[] same = {true};
    p.read()
        .forEachCopy(
            (source, sourcePitch, target, targetPitch, width, rows) -> {
              for (int row = 0; row < rows; row++) {
                ByteBuffer staged = ByteBuffer.allocate(width);
                ByteBuffer placed = ByteBuffer.allocate(width);
                from.read(source + (long) row * sourcePitch, staged);
                kv.read(target + (long) row * targetPitch, placed);
                same[0] &= staged.flip().equals(placed.flip());
              }
            });
    return same[0];
  }

  /** The descriptors of every READ of a request together. */
  public long descriptors() {
    return descriptors;
  }

  @Override
  public void close() {
    for (Posting p : postings) {
      p.staging().ifPresent(memory -> p.consumer().deregister(memory));
    }
    close(producers, producerMemory);
    close(consumers, consumerMemory);
    staging.forEach(KvMemory::close);
  }

  private static void close(List<Transport> agents, List<KvRegions> memory) {
    for (int i = 0; i < agents.size(); i++) {
      if (i < memory.size()) {
        for (KvMemory region : memory.get(i).regions()) {
          agents.get(i).deregister(region);
        }
      }
      agents.get(i).close();
      if (i < memory.size()) {
        memory.get(i).regions().forEach(KvMemory::close);
      }
    }
  }

  private static final Optional<byte[]> NONE = Optional.empty();

  private boolean same(Descriptor local, Descriptor remote) {
    return bytesAt(consumerMemory, local).mismatch(bytesAt(producerMemory, remote)) < 0;
  }

  private ByteBuffer bytesAt(List<KvRegions> ranks, Descriptor d) {
    List<KvMemory> memories = new ArrayList<>(staging);
    ranks.forEach(regions -> memories.addAll(regions.regions()));
    for (KvMemory memory : memories) {
      if (d.address() >= memory.address()
          && d.address() + d.length() <= memory.address() + memory.sizeBytes()) {
        ByteBuffer out = ByteBuffer.allocate(Math.toIntExact(d.length()));
        memory.read(d.address() - memory.address(), out);
        return out.flip();
      }
    }
    throw new IllegalStateException("no region holds descriptor " + d);
  }
}
