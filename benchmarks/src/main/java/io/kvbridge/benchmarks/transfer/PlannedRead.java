package io.kvbridge.benchmarks.transfer;

import io.kvbridge.fake.FakeFabric;
import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.nixl.MemoryMode;
import io.kvbridge.nixl.NixlBackend;
import io.kvbridge.nixl.NixlOptions;
import io.kvbridge.runtime.consumer.ReadPlan;
import io.kvbridge.runtime.engine.BlockChecksums;
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
  private final long descriptors;

  private record Posting(
      Transport consumer, DescriptorList local, String producer, DescriptorList remote) {}

  /**
   * A {@link PlanShape}'s request over one {@link FakeFabric}: host memory on the Java heap.
   *
   * @throws IllegalArgumentException past {@value #MAX_TOKENS} tokens
   */
  public PlannedRead(PlanShape shape) {
    this(fitsTheHeap(shape), new FakeFabric()::join);
  }

  /**
   * Creates agents with {@code agents} (given each agent's name), allocates and registers both
   * sides' regions, fills the producer's with random bytes and builds the plan's descriptor lists.
   */
  public PlannedRead(PlannedRequest request, Function<String, Transport> agents) {
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
    long count = 0;
    for (ReadPlan.Read read : request.plan().reads()) {
      KvRegions local = consumerMemory.get(read.consumerRank());
      KvRegions remote = producerMemory.get(read.producerRank());
      List<Descriptor> localPieces = new ArrayList<>(read.descriptors());
      List<Descriptor> remotePieces = new ArrayList<>(read.descriptors());
      read.forEachDescriptor(
          (producerOffset, consumerOffset, length) -> {
            localPieces.add(local.descriptor(consumerOffset, length));
            remotePieces.add(remote.descriptor(producerOffset, length));
          });
      count += localPieces.size();
      postings.add(
          new Posting(
              consumers.get(read.consumerRank()),
              new DescriptorList(local.kind(), localPieces),
              names.get(read.consumerRank()).get(read.producerRank()),
              new DescriptorList(remote.kind(), remotePieces)));
    }
    this.descriptors = count;
  }

  /** A request over one {@link FakeFabric}: host memory on the Java heap. */
  public static PlannedRead overFake(PlannedRequest request) {
    return new PlannedRead(request, new FakeFabric()::join);
  }

  /** A request over NIXL agents in this JVM with host memory and the connector's defaults. */
  public static PlannedRead overNixlHostMemory(PlannedRequest request) {
    NixlOptions options = NixlOptions.defaults().withMemory(MemoryMode.DRAM);
    return new PlannedRead(request, name -> NixlBackend.transport(name, options));
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
   * One request: every READ posted, then each polled (spinning) until DONE, then all released.
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
    }
    for (int i = 0; i < handles.length; i++) {
      postings.get(i).consumer().release(handles[i]);
    }
    if (failure != null) {
      throw new TransportException(failure);
    }
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
    int[] bounds = ReadPlan.stageBounds(request.producer(), 0, blocks, ReadPlan.MIN_STAGE_BYTES);
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
    }
    return true;
  }

  /** The descriptors of every READ of a request together. */
  public long descriptors() {
    return descriptors;
  }

  @Override
  public void close() {
    close(producers, producerMemory);
    close(consumers, consumerMemory);
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

  private static ByteBuffer bytesAt(List<KvRegions> ranks, Descriptor d) {
    for (KvRegions regions : ranks) {
      for (KvMemory memory : regions.regions()) {
        if (d.address() >= memory.address()
            && d.address() + d.length() <= memory.address() + memory.sizeBytes()) {
          ByteBuffer out = ByteBuffer.allocate(Math.toIntExact(d.length()));
          memory.read(d.address() - memory.address(), out);
          return out.flip();
        }
      }
    }
    throw new IllegalStateException("no region holds descriptor " + d);
  }
}
