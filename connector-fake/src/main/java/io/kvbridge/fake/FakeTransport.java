package io.kvbridge.fake;

import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.PreparedList;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link Transport} over host memory on a {@link FakeFabric}, with the semantics of a NIXL agent:
 * memory is registered before transfers may touch it, peers are reached only through loaded
 * metadata, transfers are checked in full before any byte moves, then copied for real: by the
 * fabric's executor, or by a thread that asks for the transfer's {@link #status} before any
 * executor thread has started it (whichever claims the copy first runs it; the other finds it
 * claimed). Status is DONE only once every byte is in place, and an attached notification is sent
 * only after that.
 *
 * <p>{@link #release} of a transfer still in progress cancels it: once {@code release} returns, the
 * transfer writes no further byte (each piece is copied under the transfer's lock, which {@code
 * release} takes). A peer's READ of this agent's memory is likewise a copy done by the peer.
 *
 * <p>A {@linkplain #prepare prepared list} is resolved to the memory holding each of its pieces
 * once; a post by indices only picks pieces. A remote list keeps the peer's memory as its metadata
 * described it when the list was prepared, as NIXL's prepared lists do: a region the peer
 * deregisters later is read until the peer's metadata is loaded again (a region it frees fails the
 * transfer).
 *
 * <p>Threads: safe for concurrent use; registrations, loaded peers and prepared lists are guarded
 * by one lock, each transfer by its own.
 */
public final class FakeTransport implements Transport {

  /** The largest notification payload accepted, in bytes. */
  public static final int MAX_NOTIFICATION_BYTES = 256 * 1024;

  private final FakeFabric fabric;
  private final String agentName;
  private final long instanceId;
  private final Object lock = new Object();
  private final NavigableMap<Long, FakeMemory> registered = new TreeMap<>();
  // The registered memory again, sorted by address, for lookups per descriptor that allocate
  // nothing; replaced whenever a registration changes.
  private FakeMemory[] registeredByAddress = new FakeMemory[0];
  private final Map<String, AgentMetadata> peers = new HashMap<>();
  private final Map<Long, Prepared> prepared = new HashMap<>();
  private long nextPrepared = 1;
  private final Map<Long, Transfer> transfers = new ConcurrentHashMap<>();
  private final AtomicLong nextHandle = new AtomicLong(1);
  private final Inbox inbox = new Inbox();
  private volatile boolean closed;

  FakeTransport(FakeFabric fabric, String agentName, long instanceId) {
    this.fabric = fabric;
    this.agentName = agentName;
    this.instanceId = instanceId;
  }

  /** The fabric this agent lives on. */
  public FakeFabric fabric() {
    return fabric;
  }

  @Override
  public String agentName() {
    return agentName;
  }

  @Override
  public MemoryKind memoryKind() {
    return MemoryKind.DRAM;
  }

  @Override
  public KvMemory allocate(long sizeBytes) {
    requireOpen("allocate memory");
    return fabric.allocate(this, sizeBytes);
  }

  @Override
  public void register(KvMemory memory) {
    Objects.requireNonNull(memory, "memory");
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
    synchronized (lock) {
      requireOpen("register memory");
      if (registered.putIfAbsent(fake.address(), fake) != null) {
        throw new TransportException(memory + " is already registered with agent " + agentName);
      }
      registeredByAddress = registered.values().toArray(new FakeMemory[0]);
    }
  }

  @Override
  public void deregister(KvMemory memory) {
    Objects.requireNonNull(memory, "memory");
    synchronized (lock) {
      requireOpen("deregister memory");
      if (!registered.remove(memory.address(), memory)) {
        throw new TransportException(memory + " is not registered with agent " + agentName);
      }
      registeredByAddress = registered.values().toArray(new FakeMemory[0]);
      prepared.values().removeIf(p -> p.list.isLocal() && p.touches(memory));
    }
  }

  @Override
  public byte[] localMetadata() {
    synchronized (lock) {
      requireOpen("describe itself");
      List<AgentMetadata.Region> regions = new ArrayList<>();
      for (FakeMemory m : registered.values()) {
        regions.add(
            new AgentMetadata.Region(
                m.address(), m.sizeBytes(), m.deviceId(), m.kind(), m.fileName()));
      }
      return new AgentMetadata(fabric.identity(), agentName, instanceId, regions).encode();
    }
  }

  @Override
  public String loadRemoteMetadata(byte[] metadata) {
    Objects.requireNonNull(metadata, "metadata");
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
    synchronized (lock) {
      requireOpen("load peer metadata");
      if (peers.put(peer.agentName(), peer) != null) {
        forgetPreparedOf(peer.agentName());
      }
    }
    return peer.agentName();
  }

  @Override
  public String peerAgentName(byte[] metadata) {
    Objects.requireNonNull(metadata, "metadata");
    return AgentMetadata.decode(metadata).agentName();
  }

  @Override
  public void invalidateRemote(String remoteAgent) {
    synchronized (lock) {
      if (peers.remove(remoteAgent) != null) {
        forgetPreparedOf(remoteAgent);
      }
    }
  }

  @Override
  public TransferHandle post(
      TransferOp op,
      DescriptorList local,
      String remoteAgent,
      DescriptorList remote,
      Optional<byte[]> notification) {
    Objects.requireNonNull(op, "op");
    Objects.requireNonNull(local, "local");
    Objects.requireNonNull(remoteAgent, "remoteAgent");
    Objects.requireNonNull(remote, "remote");
    Objects.requireNonNull(notification, "notification");
    // Messages are built only on failure: post runs per request and per descriptor.
    try {
      local.checkPairsWith(remote);
    } catch (IllegalArgumentException e) {
      throw new TransportException(
          "cannot post " + what(op, remoteAgent) + ": " + e.getMessage(), e);
    }
    Optional<byte[]> attached = notification.map(byte[]::clone);
    if (attached.isPresent()) {
      checkNotificationSize(attached.get(), remoteAgent);
    }

    int count = local.descriptors().size();
    CopyPlan plan = new CopyPlan(count);
    AgentMetadata peer;
    synchronized (lock) {
      if (closed) {
        requireOpen("post a " + op);
      }
      peer = peers.get(remoteAgent);
      if (peer == null) {
        throw new TransportException(unknownPeer("post a " + op + " to", remoteAgent));
      }
      for (int i = 0; i < count; i++) {
        Descriptor d = local.descriptors().get(i);
        FakeMemory m = registeredHolding(d, local.kind());
        if (m == null) {
          throw new TransportException(
              "cannot post "
                  + what(op, remoteAgent)
                  + ": local descriptor "
                  + i
                  + " "
                  + describe(d, local.kind())
                  + " lies outside the memory registered with agent "
                  + agentName
                  + "; register the memory first");
        }
        plan.local[i] = m;
        plan.localOffset[i] = d.address() - m.address();
        plan.length[i] = d.length();
      }
    }
    List<Descriptor> remotePieces = remote.descriptors();
    for (int i = 0; i < count; i++) {
      Descriptor d = remotePieces.get(i);
      if (!peer.covers(d, remote.kind())) {
        throw new TransportException(
            "cannot post "
                + what(op, remoteAgent)
                + ": remote descriptor "
                + i
                + " "
                + describe(d, remote.kind())
                + " lies outside the memory "
                + remoteAgent
                + " registered (as its loaded metadata says); reload its metadata if it"
                + " registered more since");
      }
    }
    requireReachable(op, peer);
    long id = nextHandle.getAndIncrement();
    TransferHandle handle = new TransferHandle(id, local.totalBytes());
    Transfer transfer = new Transfer(handle, op, plan, remoteAgent, peer.instanceId(), attached);
    transfers.put(id, transfer);
    if (!fabric.locate(peer, remote, plan.remote, plan.remoteOffset)) {
      transfer.fail(
          remoteAgent + " no longer has that memory registered; reload its metadata and retry");
      return handle;
    }
    transfer.start();
    return handle;
  }

  /**
   * {@inheritDoc}
   *
   * <p>The pieces are checked against the registrations once, here; a remote list is resolved to
   * the peer's memory as its loaded metadata describes it.
   */
  @Override
  public PreparedList prepare(DescriptorList local) {
    Objects.requireNonNull(local, "local");
    int count = local.descriptors().size();
    Bytes[] memories = new Bytes[count];
    long[] offsets = new long[count];
    synchronized (lock) {
      requireOpen("prepare a descriptor list");
      for (int i = 0; i < count; i++) {
        Descriptor d = local.descriptors().get(i);
        FakeMemory m = registeredHolding(d, local.kind());
        if (m == null) {
          throw new TransportException(
              "agent "
                  + agentName
                  + " cannot prepare a list of its memory: descriptor "
                  + i
                  + " "
                  + describe(d, local.kind())
                  + " lies outside the memory registered with it; register the memory first");
        }
        memories[i] = m;
        offsets[i] = d.address() - m.address();
      }
      PreparedList list = new PreparedList(nextPrepared++, Optional.empty(), local);
      prepared.put(list.id(), new Prepared(list, memories, offsets, 0));
      return list;
    }
  }

  @Override
  public PreparedList prepare(String remoteAgent, DescriptorList remote) {
    Objects.requireNonNull(remoteAgent, "remoteAgent");
    Objects.requireNonNull(remote, "remote");
    AgentMetadata peer;
    synchronized (lock) {
      requireOpen("prepare a descriptor list of " + remoteAgent);
      peer = peers.get(remoteAgent);
    }
    if (peer == null) {
      throw new TransportException(unknownPeer("prepare a list of the memory of", remoteAgent));
    }
    int count = remote.descriptors().size();
    for (int i = 0; i < count; i++) {
      Descriptor d = remote.descriptors().get(i);
      if (!peer.covers(d, remote.kind())) {
        throw new TransportException(
            "agent "
                + agentName
                + " cannot prepare a list of the memory of "
                + remoteAgent
                + ": descriptor "
                + i
                + " "
                + describe(d, remote.kind())
                + " lies outside the memory it registered (as its loaded metadata says); reload"
                + " its metadata if it registered more since");
      }
    }
    Bytes[] memories = new Bytes[count];
    long[] offsets = new long[count];
    if (!fabric.locate(peer, remote, memories, offsets)) {
      throw new TransportException(
          "agent "
              + agentName
              + " cannot prepare a list of the memory of "
              + remoteAgent
              + ": it no longer has that memory registered, or is gone; reload its metadata");
    }
    synchronized (lock) {
      requireOpen("prepare a descriptor list of " + remoteAgent);
      if (peers.get(remoteAgent) != peer) {
        throw new TransportException(
            "agent "
                + agentName
                + " cannot prepare a list of the memory of "
                + remoteAgent
                + ": its metadata was invalidated or reloaded meanwhile; prepare it again");
      }
      PreparedList list = new PreparedList(nextPrepared++, Optional.of(remoteAgent), remote);
      prepared.put(list.id(), new Prepared(list, memories, offsets, peer.instanceId()));
      return list;
    }
  }

  @Override
  public TransferHandle post(
      TransferOp op,
      PreparedList local,
      int[] localIndices,
      PreparedList remote,
      int[] remoteIndices,
      Optional<byte[]> notification) {
    Objects.requireNonNull(op, "op");
    Objects.requireNonNull(local, "local");
    Objects.requireNonNull(localIndices, "localIndices");
    Objects.requireNonNull(remote, "remote");
    Objects.requireNonNull(remoteIndices, "remoteIndices");
    Objects.requireNonNull(notification, "notification");
    Optional<byte[]> attached = notification.map(byte[]::clone);
    Prepared mine;
    Prepared theirs;
    synchronized (lock) {
      if (closed) {
        requireOpen("post a " + op);
      }
      mine = usable(local, op);
      theirs = usable(remote, op);
    }
    PreparedList.requireSides(op, local, remote);
    String remoteAgent = remote.remoteAgent().get();
    if (attached.isPresent()) {
      checkNotificationSize(attached.get(), remoteAgent);
    }
    if (localIndices.length != remoteIndices.length) {
      throw new TransportException(
          "cannot post "
              + what(op, remoteAgent)
              + ": "
              + localIndices.length
              + " local indices and "
              + remoteIndices.length
              + " remote ones; they pair position by position");
    }
    local.checkIndices(localIndices);
    remote.checkIndices(remoteIndices);
    int count = localIndices.length;
    CopyPlan plan = new CopyPlan(count);
    long bytes = 0;
    for (int i = 0; i < count; i++) {
      int l = localIndices[i];
      int r = remoteIndices[i];
      long length = mine.lengths[l];
      if (length != theirs.lengths[r]) {
        throw new TransportException(
            "cannot post "
                + what(op, remoteAgent)
                + ": at position "
                + i
                + " local piece "
                + l
                + " has "
                + length
                + " bytes, remote piece "
                + r
                + " has "
                + theirs.lengths[r]);
      }
      plan.local[i] = mine.memories[l];
      plan.localOffset[i] = mine.offsets[l];
      plan.remote[i] = theirs.memories[r];
      plan.remoteOffset[i] = theirs.offsets[r];
      plan.length[i] = length;
      bytes += length;
    }
    if (!fabric.reachable(remoteAgent, theirs.remoteInstance)) {
      throw new TransportException(
          "cannot post "
              + what(op, remoteAgent)
              + ": "
              + remoteAgent
              + " is not reachable on fabric '"
              + fabric.name()
              + "' (it closed, was killed, or restarted); load its new metadata");
    }
    long id = nextHandle.getAndIncrement();
    TransferHandle handle = new TransferHandle(id, bytes);
    Transfer transfer =
        new Transfer(handle, op, plan, remoteAgent, theirs.remoteInstance, attached);
    transfers.put(id, transfer);
    transfer.start();
    return handle;
  }

  @Override
  public void release(PreparedList list) {
    Objects.requireNonNull(list, "list");
    synchronized (lock) {
      Prepared known = prepared.get(list.id());
      if (known != null && known.list == list) {
        prepared.remove(list.id());
      }
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>A transfer whose copy no thread has started yet is copied by the caller, before this
   * returns; the status of one that another thread is copying is read without waiting for it.
   */
  @Override
  public TransferStatus status(TransferHandle handle) {
    return transfer(handle, "report the status of").status();
  }

  @Override
  public void release(TransferHandle handle) {
    Transfer transfer = transfer(handle, "release");
    transfers.remove(handle.id(), transfer);
    transfer.cancel();
  }

  @Override
  public void notify(String remoteAgent, byte[] message) {
    Objects.requireNonNull(remoteAgent, "remoteAgent");
    checkNotificationSize(message, remoteAgent);
    AgentMetadata peer;
    synchronized (lock) {
      requireOpen("notify " + remoteAgent);
      peer = peers.get(remoteAgent);
    }
    if (peer == null) {
      throw new TransportException(unknownPeer("notify", remoteAgent));
    }
    fabric.send(remoteAgent, peer.instanceId(), new Notification(agentName, message));
  }

  @Override
  public List<Notification> drainNotifications() {
    if (closed) {
      throw new TransportException("agent " + agentName + " is closed; it receives nothing");
    }
    fabric.collect(this);
    return inbox.drain();
  }

  @Override
  public void close() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      registered.clear();
      registeredByAddress = new FakeMemory[0];
      peers.clear();
      prepared.clear();
    }
    fabric.leave(this);
    for (Transfer t : transfers.values()) {
      t.cancel();
    }
    transfers.clear();
    inbox.clear();
  }

  @Override
  public String toString() {
    return "FakeTransport[" + agentName + " on " + fabric.name() + "]";
  }

  // ---- what the fabric and peers ask ---------------------------------------------------------

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
    for (Transfer t : transfers.values()) {
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
    synchronized (lock) {
      if (closed) {
        return false;
      }
      List<Descriptor> pieces = list.descriptors();
      for (int i = 0; i < pieces.size(); i++) {
        Descriptor d = pieces.get(i);
        FakeMemory m = registeredHolding(d, list.kind());
        if (m == null) {
          return false;
        }
        memories[i] = m;
        offsets[i] = d.address() - m.address();
      }
      return true;
    }
  }

  // ---- internals -----------------------------------------------------------------------------

  /** The registered memory that holds all of {@code d}, or null; called under the lock. */
  private FakeMemory registeredHolding(Descriptor d, MemoryKind kind) {
    FakeMemory[] sorted = registeredByAddress;
    int low = 0;
    int high = sorted.length - 1;
    FakeMemory floor = null;
    while (low <= high) {
      int mid = (low + high) >>> 1;
      if (sorted[mid].address() <= d.address()) {
        floor = sorted[mid];
        low = mid + 1;
      } else {
        high = mid - 1;
      }
    }
    if (floor == null
        || kind != floor.kind()
        || d.deviceId() != floor.deviceId()
        || !d.within(floor.address(), floor.sizeBytes())) {
      return null;
    }
    return floor;
  }

  /** The list as this agent prepared it, if still usable; called under the lock. */
  private Prepared usable(PreparedList list, TransferOp op) {
    Prepared known = prepared.get(list.id());
    if (known == null || (known.list != list && !known.list.equals(list))) {
      throw new TransportException(
          "agent "
              + agentName
              + " cannot post a "
              + op
              + " from "
              + list
              + ": it was not prepared here, was released, or is no longer usable (its peer was"
              + " invalidated or reloaded, or its memory deregistered); prepare it again");
    }
    return known;
  }

  /** Makes every list prepared of {@code remoteAgent}'s memory unusable; under the lock. */
  private void forgetPreparedOf(String remoteAgent) {
    prepared.values().removeIf(p -> p.list.remoteAgent().filter(remoteAgent::equals).isPresent());
  }

  private void requireReachable(TransferOp op, AgentMetadata peer) {
    if (!fabric.reachable(peer.agentName(), peer.instanceId())) {
      throw new TransportException(
          "cannot post "
              + what(op, peer.agentName())
              + ": "
              + peer.agentName()
              + " is not reachable on fabric '"
              + fabric.name()
              + "' (it closed, was killed, or restarted); load its new metadata");
    }
  }

  private String what(TransferOp op, String remoteAgent) {
    return op + " from agent " + agentName + " to " + remoteAgent;
  }

  private Transfer transfer(TransferHandle handle, String action) {
    Objects.requireNonNull(handle, "handle");
    Transfer transfer = transfers.get(handle.id());
    if (transfer == null || transfer.handle.bytes() != handle.bytes()) {
      throw new TransportException(
          "agent "
              + agentName
              + " cannot "
              + action
              + " transfer "
              + handle.id()
              + ": it was never posted here, was already released, or the agent closed");
    }
    return transfer;
  }

  private void requireOpen(String action) {
    if (closed) {
      throw new TransportException(
          "agent " + agentName + " is closed and cannot " + action + "; create a new transport");
    }
  }

  private String unknownPeer(String action, String remoteAgent) {
    return "agent "
        + agentName
        + " cannot "
        + action
        + " "
        + remoteAgent
        + ": its metadata was never loaded or was invalidated; load it with loadRemoteMetadata";
  }

  private static void checkNotificationSize(byte[] message, String remoteAgent) {
    Objects.requireNonNull(message, "message");
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

  private static String describe(Descriptor d, MemoryKind kind) {
    return "[0x"
        + Long.toHexString(d.address())
        + ", +"
        + d.length()
        + ") on "
        + kind
        + " device "
        + d.deviceId();
  }

  /**
   * A descriptor list resolved once: piece {@code i} lies in {@code memories[i]} at {@code
   * offsets[i]} and has {@code lengths[i]} bytes.
   */
  private static final class Prepared {
    final PreparedList list;
    final Bytes[] memories;
    final long[] offsets;
    final long[] lengths;
    final long remoteInstance;

    Prepared(PreparedList list, Bytes[] memories, long[] offsets, long remoteInstance) {
      this.list = list;
      this.memories = memories;
      this.offsets = offsets;
      this.remoteInstance = remoteInstance;
      this.lengths = list.lengths();
    }

    boolean touches(KvMemory memory) {
      for (Bytes m : memories) {
        if (m == memory) {
          return true;
        }
      }
      return false;
    }
  }

  /**
   * What a transfer copies: piece {@code i} is {@code length[i]} bytes between {@code local[i]} at
   * {@code localOffset[i]} and {@code remote[i]} at {@code remoteOffset[i]}.
   */
  private static final class CopyPlan {
    final Bytes[] local;
    final long[] localOffset;
    final Bytes[] remote;
    final long[] remoteOffset;
    final long[] length;

    CopyPlan(int pieces) {
      local = new Bytes[pieces];
      localOffset = new long[pieces];
      remote = new Bytes[pieces];
      remoteOffset = new long[pieces];
      length = new long[pieces];
    }

    int size() {
      return length.length;
    }

    void copy(TransferOp op, int i) {
      if (op == TransferOp.READ) {
        Bytes.copy(remote[i], remoteOffset[i], local[i], localOffset[i], length[i]);
      } else {
        Bytes.copy(local[i], localOffset[i], remote[i], remoteOffset[i], length[i]);
      }
    }
  }

  private enum State {
    COPYING,
    DONE,
    FAILED,
    RELEASED
  }

  /**
   * One posted transfer. Every state change and every piece copy happens under {@link #lock}, so a
   * transfer that left COPYING (released, failed) writes nothing more. The state is also volatile,
   * so {@link #status()} reads it without the lock the copying thread holds for each piece. The
   * copy runs once, on the thread that claims it first: the fabric's executor or a poller.
   */
  private final class Transfer {
    private final TransferHandle handle;
    private final TransferOp op;
    private final CopyPlan plan;
    private final String remoteAgent;
    private final long remoteInstance;
    private final Optional<byte[]> notification;
    private final ReentrantLock lock = new ReentrantLock();
    private final AtomicBoolean claimed = new AtomicBoolean();
    // Written only under lock; read without it by status(). failure is written before state.
    private volatile State state = State.COPYING;
    private String failure = "";

    Transfer(
        TransferHandle handle,
        TransferOp op,
        CopyPlan plan,
        String remoteAgent,
        long remoteInstance,
        Optional<byte[]> notification) {
      this.handle = handle;
      this.op = op;
      this.plan = plan;
      this.remoteAgent = remoteAgent;
      this.remoteInstance = remoteInstance;
      this.notification = notification;
    }

    void start() {
      fabric.start(this::run, notification.isPresent());
    }

    TransferStatus status() {
      State now = state;
      if (now == State.COPYING && !claimed.get()) {
        run(); // no executor thread has started it: copy it here rather than wait for one
        now = state;
      } else if (now == State.COPYING) {
        // Another thread is copying: a poller that spins would take the core the copy needs.
        Thread.yield();
      }
      return switch (now) {
        case COPYING -> TransferStatus.IN_PROGRESS;
        case DONE -> TransferStatus.DONE;
        case FAILED -> new TransferStatus.Failed(failure);
        case RELEASED -> throw new TransportException("transfer " + handle.id() + " released");
      };
    }

    void fail(String why) {
      lock.lock();
      try {
        if (state == State.COPYING) {
          failure = why;
          state = State.FAILED;
        }
      } finally {
        lock.unlock();
      }
    }

    void cancel() {
      lock.lock();
      try {
        if (state == State.COPYING) {
          state = State.RELEASED;
        }
      } finally {
        lock.unlock();
      }
    }

    /** Copies the pieces, unless another thread already claimed the copy. */
    private void run() {
      if (!claimed.compareAndSet(false, true)) {
        return;
      }
      // Reachability may cost a look at the file system, so it is checked before and after the
      // copy; an agent of this JVM that goes meanwhile fails the transfer at once (peerLost).
      if (!stillGoing()) {
        return;
      }
      for (int i = 0; i < plan.size(); i++) {
        lock.lock();
        try {
          if (state != State.COPYING) {
            return;
          }
          if (closed) {
            fail("agent " + agentName + " closed");
            return;
          }
          plan.copy(op, i);
        } catch (RuntimeException e) {
          fail("copying failed: " + e.getMessage());
          return;
        } finally {
          lock.unlock();
        }
      }
      lock.lock();
      try {
        if (stillGoing()) {
          state = State.DONE;
          notification.ifPresent(
              n -> fabric.send(remoteAgent, remoteInstance, new Notification(agentName, n)));
        }
      } finally {
        lock.unlock();
      }
    }

    /** Whether the transfer may go on; fails it if an end has gone. */
    private boolean stillGoing() {
      lock.lock();
      try {
        if (state != State.COPYING) {
          return false;
        }
        Optional<String> broken = broken();
        broken.ifPresent(this::fail);
        return broken.isEmpty();
      } finally {
        lock.unlock();
      }
    }

    private Optional<String> broken() {
      if (closed) {
        return Optional.of("agent " + agentName + " closed");
      }
      if (!fabric.reachable(remoteAgent, remoteInstance)) {
        return Optional.of("peer " + remoteAgent + " is gone (closed, killed or restarted)");
      }
      return Optional.empty();
    }
  }
}
