package io.kvbridge.fake;

import io.kvbridge.transfer.AgentCore;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.ReadCost;
import io.kvbridge.transfer.Registrations;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.TransportBackend;
import io.kvbridge.transfer.TransportException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The mechanism of a fake agent on a {@link FakeFabric}, under an {@link AgentCore} that keeps its
 * books: host memory the fabric hands out, metadata blobs naming the fabric and the agent's
 * incarnation, copies done for real by the fabric's executor, or by a thread that asks for the
 * transfer's {@link #status} before any executor thread has started it (whichever claims the copy
 * first runs it; the other finds it claimed). Status is DONE only once every byte is in place, and
 * an attached notification is sent only after that.
 *
 * <p>{@link #release(FakeTransfer)} of a transfer still in progress cancels it: once it returns,
 * the transfer writes no further byte (each piece is copied under the transfer's lock, which
 * release takes). A peer's READ of this agent's memory is likewise a copy done by the peer.
 *
 * <p>A prepared list is resolved to the memory holding each of its pieces once; a post by indices
 * only picks pieces. A remote list keeps the peer's memory as its metadata described it when the
 * list was prepared, as NIXL's prepared lists do: a region the peer deregisters later is read until
 * the peer's metadata is loaded again (a region it frees fails the transfer).
 *
 * <p>Threads: safe for concurrent use, as {@link TransportBackend} asks; each transfer is guarded
 * by its own lock.
 */
final class FakeBackend implements TransportBackend<FakeBackend.Resolved, FakeTransfer> {

  /** The largest notification payload accepted, in bytes. */
  static final int MAX_NOTIFICATION_BYTES = FakeFabric.MAX_NOTIFICATION_BYTES;

  private final FakeFabric fabric;
  private final String agentName;
  private final long instanceId;
  // What this agent registered, as its peers' copies find it.
  private final Registrations registered = new Registrations();
  private final Map<String, AgentMetadata> peers = new ConcurrentHashMap<>();
  // Transfers not yet released, for failing them when their peer goes.
  private final Set<FakeTransfer> transfers = ConcurrentHashMap.newKeySet();
  private final Inbox inbox = new Inbox();
  private volatile boolean closed;

  FakeBackend(FakeFabric fabric, String agentName, long instanceId) {
    this.fabric = fabric;
    this.agentName = agentName;
    this.instanceId = instanceId;
  }

  @Override
  public String agentName() {
    return agentName;
  }

  @Override
  public MemoryKind memoryKind() {
    return MemoryKind.DRAM;
  }

  /**
   * A fake READ is a copy by the fabric's executor: about 0.18 ns per byte (5.5 GB/s) and 150 ns
   * per descriptor on the machine BENCHMARKS.md was measured on (its real-size rows: a Llama-3.1-8B
   * request of identical shapes against the same request split by TP, the cost model's table).
   */
  @Override
  public ReadCost readCost() {
    return FAKE_READ;
  }

  private static final ReadCost FAKE_READ = new ReadCost(150, 0.18);

  @Override
  public KvMemory allocate(long sizeBytes) {
    return fabric.allocate(this, sizeBytes);
  }

  @Override
  public void register(KvMemory memory) {
    if (!(memory instanceof FakeMemory fake) || fake.fabric() != fabric) {
      throw new TransportException(
          "agent "
              + agentName
              + " can register only memory allocated by an agent of fabric '"
              + fabric.name()
              + "', not "
              + memory);
    }
    if (fake.isClosed()) {
      throw new TransportException("cannot register " + memory + ": it was closed");
    }
    registered.add(fake);
  }

  @Override
  public void deregister(KvMemory memory) {
    registered.remove(memory);
  }

  @Override
  public byte[] localMetadata() {
    List<AgentMetadata.Region> regions = new ArrayList<>();
    for (KvMemory k : registered.all()) {
      FakeMemory m = (FakeMemory) k;
      regions.add(
          new AgentMetadata.Region(
              m.address(), m.sizeBytes(), m.deviceId(), m.kind(), m.fileName()));
    }
    return new AgentMetadata(fabric.identity(), agentName, instanceId, regions).encode();
  }

  @Override
  public String peerAgentName(byte[] metadata) {
    return AgentMetadata.decode(metadata).agentName();
  }

  @Override
  public String loadRemote(byte[] metadata, boolean replacing) {
    AgentMetadata peer = AgentMetadata.decode(metadata);
    if (!peer.fabric().equals(fabric.identity())) {
      throw new TransportException(
          "cannot load the metadata of agent "
              + peer.agentName()
              + ": it lives on fabric "
              + peer.fabric()
              + ", not on this agent's fabric "
              + fabric.identity()
              + "; both engines must use the same fake.fabric");
    }
    peers.put(peer.agentName(), peer);
    return peer.agentName();
  }

  @Override
  public void unloadRemote(String remoteAgent) {
    peers.remove(remoteAgent);
  }

  @Override
  public boolean covers(String remoteAgent, DescriptorList remote) {
    AgentMetadata peer = peers.get(remoteAgent);
    if (peer == null) {
      return false;
    }
    for (Descriptor d : remote.descriptors()) {
      if (!peer.covers(d, remote.kind())) {
        return false;
      }
    }
    return true;
  }

  @Override
  public Resolved prepare(Optional<String> remoteAgent, DescriptorList pieces) {
    int count = pieces.descriptors().size();
    Bytes[] memories = new Bytes[count];
    long[] offsets = new long[count];
    if (remoteAgent.isEmpty()) {
      resolveLocal(pieces, memories, offsets);
      return new Resolved(pieces, memories, offsets, 0);
    }
    AgentMetadata peer = peers.get(remoteAgent.get());
    if (!fabric.locate(peer, pieces, memories, offsets)) {
      throw new TransportException(
          "agent "
              + agentName
              + " cannot prepare a list of the memory of "
              + remoteAgent.get()
              + ": it no longer has that memory registered, or is gone; reload its metadata");
    }
    return new Resolved(pieces, memories, offsets, peer.instanceId());
  }

  @Override
  public void releasePrepared(Resolved list) {
    // Nothing is held: the memories stay their owners'.
  }

  @Override
  public FakeTransfer post(
      TransferOp op,
      DescriptorList local,
      String remoteAgent,
      DescriptorList remote,
      Optional<byte[]> notification) {
    notification.ifPresent(n -> checkNotificationSize(n, remoteAgent));
    AgentMetadata peer = peers.get(remoteAgent);
    int count = local.descriptors().size();
    FakeTransfer.CopyPlan plan = new FakeTransfer.CopyPlan(count);
    resolveLocal(local, plan.local, plan.localOffset);
    for (int i = 0; i < count; i++) {
      plan.length[i] = local.descriptors().get(i).length();
    }
    requireReachable(op, remoteAgent, peer.instanceId());
    FakeTransfer transfer =
        new FakeTransfer(this, op, plan, remoteAgent, peer.instanceId(), notification);
    transfers.add(transfer);
    if (!fabric.locate(peer, remote, plan.remote, plan.remoteOffset)) {
      transfer.fail(
          remoteAgent + " no longer has that memory registered; reload its metadata and retry");
      return transfer;
    }
    transfer.start();
    return transfer;
  }

  @Override
  public FakeTransfer post(
      TransferOp op,
      Resolved local,
      int[] localIndices,
      String remoteAgent,
      Resolved remote,
      int[] remoteIndices,
      Optional<byte[]> notification) {
    notification.ifPresent(n -> checkNotificationSize(n, remoteAgent));
    int count = localIndices.length;
    FakeTransfer.CopyPlan plan = new FakeTransfer.CopyPlan(count);
    for (int i = 0; i < count; i++) {
      int l = localIndices[i];
      int r = remoteIndices[i];
      plan.local[i] = local.memories[l];
      plan.localOffset[i] = local.offsets[l];
      plan.remote[i] = remote.memories[r];
      plan.remoteOffset[i] = remote.offsets[r];
      plan.length[i] = local.lengths[l];
    }
    requireReachable(op, remoteAgent, remote.remoteInstance);
    FakeTransfer transfer =
        new FakeTransfer(this, op, plan, remoteAgent, remote.remoteInstance, notification);
    transfers.add(transfer);
    transfer.start();
    return transfer;
  }

  /**
   * {@inheritDoc}
   *
   * <p>A transfer whose copy no thread has started yet is copied by the caller, before this
   * returns; the status of one that another thread is copying is read without waiting for it.
   */
  @Override
  public TransferStatus status(FakeTransfer transfer) {
    return transfer.status();
  }

  @Override
  public void release(FakeTransfer transfer) {
    transfers.remove(transfer);
    transfer.cancel();
  }

  @Override
  public void notify(String remoteAgent, byte[] message) {
    checkNotificationSize(message, remoteAgent);
    AgentMetadata peer = peers.get(remoteAgent);
    fabric.send(remoteAgent, peer.instanceId(), new Notification(agentName, message));
  }

  @Override
  public List<Notification> takeNotifications() {
    fabric.collect(this);
    return inbox.drain();
  }

  @Override
  public void close() {
    closed = true;
    fabric.leave(this);
    for (FakeTransfer t : transfers) {
      t.cancel();
    }
    transfers.clear();
    registered.clear();
    peers.clear();
    inbox.clear();
  }

  @Override
  public String toString() {
    return "FakeBackend[" + agentName + " on " + fabric.name() + "]";
  }

  // ---- what the fabric, peers and transfers ask ----------------------------------------------

  FakeFabric fabric() {
    return fabric;
  }

  boolean isClosed() {
    return closed;
  }

  long instanceId() {
    return instanceId;
  }

  void receive(Notification n) {
    if (!closed) {
      inbox.add(n);
    }
  }

  /** Fails the transfers to the peer incarnation that is gone. */
  void peerLost(String peerName, long peerInstance, String why) {
    for (FakeTransfer t : transfers) {
      if (t.remoteAgent.equals(peerName) && t.remoteInstance == peerInstance) {
        t.fail(why);
      }
    }
  }

  /**
   * Where a peer's descriptors land in this agent's registered memory: piece {@code i} in {@code
   * memories[i]} at {@code offsets[i]}. False if some piece lies outside it.
   */
  boolean locateForPeer(DescriptorList list, Bytes[] memories, long[] offsets) {
    if (closed) {
      return false;
    }
    List<Descriptor> pieces = list.descriptors();
    for (int i = 0; i < pieces.size(); i++) {
      Descriptor d = pieces.get(i);
      KvMemory m = registered.holding(d, list.kind());
      if (m == null) {
        return false;
      }
      memories[i] = (FakeMemory) m;
      offsets[i] = d.address() - m.address();
    }
    return true;
  }

  // ---- internals -----------------------------------------------------------------------------

  /** Resolves local pieces the core found in registered memory. */
  private void resolveLocal(DescriptorList local, Bytes[] memories, long[] offsets) {
    if (!locateForPeer(local, memories, offsets)) {
      throw new TransportException(
          "agent "
              + agentName
              + " lost a registration while resolving "
              + local.kind()
              + " pieces");
    }
  }

  private void requireReachable(TransferOp op, String remoteAgent, long remoteInstance) {
    if (!fabric.reachable(remoteAgent, remoteInstance)) {
      throw new TransportException(
          "cannot post "
              + op
              + " from agent "
              + agentName
              + " to "
              + remoteAgent
              + ": "
              + remoteAgent
              + " is not reachable on fabric '"
              + fabric.name()
              + "' (it closed, was killed, or restarted); load its new metadata");
    }
  }

  private static void checkNotificationSize(byte[] message, String remoteAgent) {
    if (message.length > MAX_NOTIFICATION_BYTES) {
      throw new TransportException(
          "a notification to "
              + remoteAgent
              + " of "
              + message.length
              + " bytes exceeds the limit of "
              + MAX_NOTIFICATION_BYTES
              + " bytes; move bulk data with a transfer");
    }
  }

  /**
   * A descriptor list resolved once: piece {@code i} lies in {@code memories[i]} at {@code
   * offsets[i]}.
   */
  static final class Resolved {
    private final Bytes[] memories;
    private final long[] offsets;
    private final long[] lengths;
    private final long remoteInstance;

    private Resolved(DescriptorList pieces, Bytes[] memories, long[] offsets, long instance) {
      this.memories = memories;
      this.offsets = offsets;
      this.remoteInstance = instance;
      this.lengths = new long[memories.length];
      for (int i = 0; i < lengths.length; i++) {
        lengths[i] = pieces.descriptors().get(i).length();
      }
    }
  }
}
