package io.kvbridge.fake;

import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Map.Entry;
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
 * <p>Threads: safe for concurrent use; registrations and loaded peers are guarded by one lock, each
 * transfer by its own.
 */
public final class FakeTransport implements Transport {

  /** The largest notification payload accepted, in bytes. */
  public static final int MAX_NOTIFICATION_BYTES = 256 * 1024;

  private final FakeFabric fabric;
  private final String agentName;
  private final long instanceId;
  private final Object lock = new Object();
  private final NavigableMap<Long, FakeMemory> registered = new TreeMap<>();
  private final Map<String, AgentMetadata> peers = new HashMap<>();
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
      peers.put(peer.agentName(), peer);
    }
    return peer.agentName();
  }

  @Override
  public void invalidateRemote(String remoteAgent) {
    synchronized (lock) {
      peers.remove(remoteAgent);
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
    String what = op + " from agent " + agentName + " to " + remoteAgent;
    try {
      local.checkPairsWith(remote);
    } catch (IllegalArgumentException e) {
      throw new TransportException("cannot post " + what + ": " + e.getMessage(), e);
    }
    Optional<byte[]> attached = notification.map(byte[]::clone);
    attached.ifPresent(n -> checkNotificationSize(n, remoteAgent));

    AgentMetadata peer;
    List<Located> localPieces;
    synchronized (lock) {
      requireOpen("post a " + op);
      peer = peers.get(remoteAgent);
      if (peer == null) {
        throw new TransportException(unknownPeer("post a " + op + " to", remoteAgent));
      }
      localPieces = locateRegistered(local, what);
    }
    for (int i = 0; i < remote.descriptors().size(); i++) {
      Descriptor d = remote.descriptors().get(i);
      if (peer.regionHolding(d, remote.kind()).isEmpty()) {
        throw new TransportException(
            "cannot post "
                + what
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
    if (!fabric.reachable(remoteAgent, peer.instanceId())) {
      throw new TransportException(
          "cannot post "
              + what
              + ": "
              + remoteAgent
              + " is not reachable on fabric '"
              + fabric.name()
              + "' (it closed, was killed, or restarted); load its new metadata");
    }

    long id = nextHandle.getAndIncrement();
    TransferHandle handle = new TransferHandle(id, local.totalBytes());
    Transfer transfer = new Transfer(handle, remoteAgent, peer.instanceId(), attached);
    Optional<List<Located>> remotePieces = fabric.locate(peer, remote);
    if (remotePieces.isPresent()) {
      for (int i = 0; i < localPieces.size(); i++) {
        Located l = localPieces.get(i);
        Located r = remotePieces.get().get(i);
        transfer.pieces.add(op == TransferOp.READ ? new Piece(r, l) : new Piece(l, r));
      }
    }
    transfers.put(id, transfer);
    if (remotePieces.isEmpty()) {
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
      peers.clear();
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

  /** Where a peer's descriptors land in this agent's registered memory; empty if any is not. */
  Optional<List<Located>> locateForPeer(DescriptorList list) {
    synchronized (lock) {
      if (closed) {
        return Optional.empty();
      }
      List<Located> out = new ArrayList<>();
      for (Descriptor d : list.descriptors()) {
        Optional<Located> at = locate(d, list.kind());
        if (at.isEmpty()) {
          return Optional.empty();
        }
        out.add(at.get());
      }
      return Optional.of(out);
    }
  }

  // ---- internals -----------------------------------------------------------------------------

  private List<Located> locateRegistered(DescriptorList list, String what) {
    List<Located> out = new ArrayList<>();
    for (int i = 0; i < list.descriptors().size(); i++) {
      Descriptor d = list.descriptors().get(i);
      int index = i;
      out.add(
          locate(d, list.kind())
              .orElseThrow(
                  () ->
                      new TransportException(
                          "cannot post "
                              + what
                              + ": local descriptor "
                              + index
                              + " "
                              + describe(d, list.kind())
                              + " lies outside the memory registered with agent "
                              + agentName
                              + "; register the memory first")));
    }
    return out;
  }

  private Optional<Located> locate(Descriptor d, MemoryKind kind) {
    Entry<Long, FakeMemory> floor = registered.floorEntry(d.address());
    if (floor == null) {
      return Optional.empty();
    }
    FakeMemory m = floor.getValue();
    if (kind != m.kind() || d.deviceId() != m.deviceId() || !d.within(m.address(), m.sizeBytes())) {
      return Optional.empty();
    }
    return Optional.of(new Located(m, d.address() - m.address(), d.length()));
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

  /** A piece of a descriptor resolved to the memory that holds it. */
  record Located(Bytes memory, long offset, long length) {}

  /** One copy: {@code length} bytes from {@code from} to {@code to}. */
  private record Piece(Located from, Located to) {
    void copy() {
      Bytes.copy(from.memory(), from.offset(), to.memory(), to.offset(), from.length());
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
    private final String remoteAgent;
    private final long remoteInstance;
    private final Optional<byte[]> notification;
    private final List<Piece> pieces = new ArrayList<>();
    private final ReentrantLock lock = new ReentrantLock();
    private final AtomicBoolean claimed = new AtomicBoolean();
    // Written only under lock; read without it by status(). failure is written before state.
    private volatile State state = State.COPYING;
    private String failure = "";

    Transfer(
        TransferHandle handle,
        String remoteAgent,
        long remoteInstance,
        Optional<byte[]> notification) {
      this.handle = handle;
      this.remoteAgent = remoteAgent;
      this.remoteInstance = remoteInstance;
      this.notification = notification;
    }

    void start() {
      fabric.execute(this::run);
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
      for (Piece piece : pieces) {
        lock.lock();
        try {
          if (state != State.COPYING) {
            return;
          }
          if (closed) {
            fail("agent " + agentName + " closed");
            return;
          }
          piece.copy();
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
