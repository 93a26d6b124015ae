package io.kvbridge.benchmarks.transfer;

import io.kvbridge.fake.FakeFabric;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.runtime.consumer.ReadPlan;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A {@link PlanShape}'s request read through the fake transport as the consumer reads it: one agent
 * per rank on each side on one {@link FakeFabric}, each with one registered region holding its
 * rank's pool, and per request one READ per (consumer rank, producer rank) pair of the plan, with
 * the plan's descriptors. The descriptor lists are built once, so a request times the transport
 * alone: post every READ, poll each until DONE, release them, as the consumer's worker side does.
 *
 * <p>Threads: confined to one benchmark thread (the fabric copies on threads of its own).
 */
public final class PlannedRead implements AutoCloseable {

  /** The longest prompt read: both sides' regions of it must fit in the heap together. */
  public static final int MAX_TOKENS = 8_192;

  private final PlanShape shape;
  private final List<Transport> producers = new ArrayList<>();
  private final List<Transport> consumers = new ArrayList<>();
  private final List<KvMemory> producerMemory = new ArrayList<>();
  private final List<KvMemory> consumerMemory = new ArrayList<>();
  private final List<Posting> postings = new ArrayList<>();

  private record Posting(
      Transport consumer, DescriptorList local, String producer, DescriptorList remote) {}

  /** Creates and registers both sides' agents and regions, fills the producer's, plans the read. */
  public PlannedRead(PlanShape shape) {
    if (shape.tokens() > MAX_TOKENS) {
      throw new IllegalArgumentException(
          "a planned read holds both sides' KV in this heap: at most "
              + MAX_TOKENS
              + " tokens, got "
              + shape.tokens());
    }
    this.shape = shape;
    FakeFabric fabric = new FakeFabric();
    List<KvLayout> producerLayouts = shape.producer();
    List<KvLayout> consumerLayouts = shape.consumer();
    for (int q = 0; q < producerLayouts.size(); q++) {
      Transport agent = fabric.join("prefill-" + q);
      KvMemory memory = agent.allocate(producerLayouts.get(q).totalBytes());
      agent.register(memory);
      ReadPair.fillRandom(memory, q);
      producers.add(agent);
      producerMemory.add(memory);
    }
    List<List<String>> names = new ArrayList<>();
    for (int r = 0; r < consumerLayouts.size(); r++) {
      Transport agent = fabric.join("decode-" + r);
      KvMemory memory = agent.allocate(consumerLayouts.get(r).totalBytes());
      agent.register(memory);
      List<String> loaded = new ArrayList<>();
      for (Transport producer : producers) {
        loaded.add(agent.loadRemoteMetadata(producer.localMetadata()));
      }
      consumers.add(agent);
      consumerMemory.add(memory);
      names.add(loaded);
    }
    for (ReadPlan.Read read : shape.plan().reads()) {
      KvMemory local = consumerMemory.get(read.consumerRank());
      KvMemory remote = producerMemory.get(read.producerRank());
      List<Descriptor> localPieces = new ArrayList<>(read.descriptors());
      List<Descriptor> remotePieces = new ArrayList<>(read.descriptors());
      read.forEachDescriptor(
          (producerOffset, consumerOffset, length) -> {
            localPieces.add(
                new Descriptor(local.address() + consumerOffset, length, local.deviceId()));
            remotePieces.add(
                new Descriptor(remote.address() + producerOffset, length, remote.deviceId()));
          });
      postings.add(
          new Posting(
              consumers.get(read.consumerRank()),
              new DescriptorList(local.kind(), localPieces),
              names.get(read.consumerRank()).get(read.producerRank()),
              new DescriptorList(remote.kind(), remotePieces)));
    }
  }

  /** The request read. */
  public PlanShape shape() {
    return shape;
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
    long sum = 0;
    for (Posting p : postings) {
      sum += p.local().descriptors().size();
    }
    return sum;
  }

  @Override
  public void close() {
    for (int q = 0; q < producers.size(); q++) {
      producers.get(q).deregister(producerMemory.get(q));
      producers.get(q).close();
      producerMemory.get(q).close();
    }
    for (int r = 0; r < consumers.size(); r++) {
      consumers.get(r).deregister(consumerMemory.get(r));
      consumers.get(r).close();
      consumerMemory.get(r).close();
    }
  }

  private static final Optional<byte[]> NONE = Optional.empty();

  private boolean same(Descriptor local, Descriptor remote) {
    return bytesAt(consumerMemory, local).mismatch(bytesAt(producerMemory, remote)) < 0;
  }

  private static ByteBuffer bytesAt(List<KvMemory> regions, Descriptor d) {
    for (KvMemory memory : regions) {
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
