package io.kvbridge.transfer;

import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A {@link Transport} over a {@link TransportBackend}: the agent that keeps the books and checks
 * the contract once, for every connector, so that a backend supplies only the mechanism (NIXL's
 * agent over its backend engines). The books are the memory registered here, the peers whose
 * metadata is loaded, the prepared lists, the posted transfers and whether the agent is closed; the
 * checks are the ones {@link Transport} and {@link PreparedList} promise, each refusal made before
 * the backend is asked and so before any byte moves, with the messages below.
 *
 * <p>A list is usable while the core keeps it: it is dropped (and released in the backend) when it
 * is released, when its peer is invalidated or loaded again, when memory it lies in is
 * deregistered, and when the agent closes.
 *
 * <p>Threads: safe for concurrent use. Changes to the books (registering, loading, preparing,
 * releasing a list, closing) take a write lock; transfers, notifications and polls take its read
 * lock, so they run concurrently with each other and never see a list or request released under
 * them.
 *
 * @param <L> the backend's prepared list
 * @param <R> the backend's transfer request
 */
public final class AgentCore<L, R> implements Transport {

  private static final System.Logger LOG = System.getLogger(AgentCore.class.getName());

  private final TransportBackend<L, R> backend;
  private final String agentName;
  private final ReentrantReadWriteLock books = new ReentrantReadWriteLock();
  private final Lock reading = books.readLock();
  private final Lock writing = books.writeLock();
  private final Registrations registered = new Registrations();
  private final Set<String> peers = new HashSet<>();
  private final PreparedLists<L> prepared;
  private final Refusals refuse;
  private final Map<Long, Posted<R>> transfers = new ConcurrentHashMap<>();
  private final AtomicLong nextHandle = new AtomicLong(1);
  private volatile boolean closed;
  private volatile boolean handedOver;

  /** An open agent over {@code backend}, which it owns from now on. */
  public AgentCore(TransportBackend<L, R> backend) {
    this.backend = Objects.requireNonNull(backend, "backend");
    this.agentName = backend.agentName();
    this.prepared = new PreparedLists<>(agentName);
    this.refuse = new Refusals(agentName);
  }

  /**
   * Hands the backend over to a caller that decorates it (a fault injector, say) and builds a new
   * core over the decoration. Only an agent nothing was done with yet can hand it over; this core
   * is closed then, without closing the backend.
   *
   * @throws IllegalStateException if memory is registered, a peer loaded, a list prepared, a
   *     transfer posted, or the agent closed
   */
  public TransportBackend<L, R> handOver() {
    writing.lock();
    try {
      if (closed
          || !registered.all().isEmpty()
          || !peers.isEmpty()
          || !prepared.isEmpty()
          || !transfers.isEmpty()) {
        throw new IllegalStateException(
            "agent "
                + agentName
                + " was used or closed already; decorate its backend before using the agent");
      }
      closed = true;
      handedOver = true;
      return backend;
    } finally {
      writing.unlock();
    }
  }

  @Override
  public String agentName() {
    return agentName;
  }

  @Override
  public MemoryKind memoryKind() {
    return backend.memoryKind();
  }

  @Override
  public ReadCost readCost() {
    return backend.readCost();
  }

  @Override
  public KvMemory allocate(long sizeBytes) {
    requireOpen("allocate memory");
    return backend.allocate(sizeBytes);
  }

  @Override
  public void register(KvMemory memory) {
    Objects.requireNonNull(memory, "memory");
    writing.lock();
    try {
      requireOpen("register memory");
      if (registered.contains(memory)) {
        throw refuse.alreadyRegistered(memory);
      }
      backend.register(memory);
      registered.add(memory);
    } finally {
      writing.unlock();
    }
  }

  @Override
  public void deregister(KvMemory memory) {
    Objects.requireNonNull(memory, "memory");
    writing.lock();
    try {
      requireOpen("deregister memory");
      if (!registered.remove(memory)) {
        throw refuse.notRegistered(memory);
      }
      release(prepared.removeIf(p -> p.memories.contains(memory)));
      backend.deregister(memory);
    } finally {
      writing.unlock();
    }
  }

  @Override
  public byte[] localMetadata() {
    reading.lock();
    try {
      requireOpen("describe itself");
      return backend.localMetadata();
    } finally {
      reading.unlock();
    }
  }

  @Override
  public String loadRemoteMetadata(byte[] metadata) {
    Objects.requireNonNull(metadata, "metadata");
    if (metadata.length == 0) {
      throw refuse.emptyMetadata();
    }
    String peer = backend.peerAgentName(metadata);
    writing.lock();
    try {
      requireOpen("load peer metadata");
      boolean replacing = peers.contains(peer);
      if (replacing) {
        release(prepared.removeIf(p -> p.isOf(peer)));
      }
      String loaded = backend.loadRemote(metadata, replacing);
      peers.add(loaded);
      return loaded;
    } finally {
      writing.unlock();
    }
  }

  @Override
  public String peerAgentName(byte[] metadata) {
    Objects.requireNonNull(metadata, "metadata");
    return backend.peerAgentName(metadata);
  }

  @Override
  public void invalidateRemote(String remoteAgent) {
    writing.lock();
    try {
      if (!closed) {
        forget(remoteAgent);
      }
    } finally {
      writing.unlock();
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
      throw refuse.unpaired(op, remoteAgent, e);
    }
    reading.lock();
    try {
      if (closed) {
        requireOpen("post a " + op);
      }
      if (!peers.contains(remoteAgent)) {
        throw refuse.unknownPeer("post a " + op + " to", remoteAgent);
      }
      Optional<Integer> outside = registered.firstOutside(local);
      if (outside.isPresent()) {
        throw refuse.postOutsideLocal(op, remoteAgent, local, outside.get());
      }
      if (!backend.covers(remoteAgent, remote)) {
        throw refuse.postOutsideRemote(op, remoteAgent, remote);
      }
      R request = backend.post(op, local, remoteAgent, remote, notification.map(byte[]::clone));
      return keep(request, local.totalBytes());
    } finally {
      reading.unlock();
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>The pieces are checked here once; the backend prepares them its way.
   */
  @Override
  public PreparedList prepare(DescriptorList local) {
    Objects.requireNonNull(local, "local");
    writing.lock();
    try {
      requireOpen("prepare a descriptor list");
      List<KvMemory> holding = new ArrayList<>(1);
      List<Descriptor> pieces = local.descriptors();
      for (int i = 0; i < pieces.size(); i++) {
        KvMemory m = registered.holding(pieces.get(i), local.kind());
        if (m == null) {
          throw refuse.prepareOutsideLocal(local, i);
        }
        if (!holding.contains(m)) {
          holding.add(m);
        }
      }
      return prepared.keep(
          Optional.empty(), local, backend.prepare(Optional.empty(), local), holding);
    } finally {
      writing.unlock();
    }
  }

  @Override
  public PreparedList prepare(String remoteAgent, DescriptorList remote) {
    Objects.requireNonNull(remoteAgent, "remoteAgent");
    Objects.requireNonNull(remote, "remote");
    writing.lock();
    try {
      requireOpen("prepare a descriptor list of " + remoteAgent);
      if (!peers.contains(remoteAgent)) {
        throw refuse.unknownPeer("prepare a list of the memory of", remoteAgent);
      }
      if (!backend.covers(remoteAgent, remote)) {
        throw refuse.prepareOutsideRemote(remoteAgent, remote);
      }
      Optional<String> of = Optional.of(remoteAgent);
      return prepared.keep(of, remote, backend.prepare(of, remote), List.of());
    } finally {
      writing.unlock();
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
    reading.lock();
    try {
      if (closed) {
        requireOpen("post a " + op);
      }
      PreparedLists.Entry<L> mine = prepared.usable(local, op);
      PreparedLists.Entry<L> theirs = prepared.usable(remote, op);
      PreparedList.requireSides(op, local, remote);
      String remoteAgent = remote.remoteAgent().get();
      long bytes =
          PreparedLists.checkSelection(
              refuse.transfer(op, remoteAgent), mine, localIndices, theirs, remoteIndices);
      R request =
          backend.post(
              op,
              mine.list,
              localIndices,
              remoteAgent,
              theirs.list,
              remoteIndices,
              notification.map(byte[]::clone));
      return keep(request, bytes);
    } finally {
      reading.unlock();
    }
  }

  @Override
  public void release(PreparedList list) {
    Objects.requireNonNull(list, "list");
    writing.lock();
    try {
      prepared.remove(list).ifPresent(backend::releasePrepared);
    } finally {
      writing.unlock();
    }
  }

  @Override
  public TransferStatus status(TransferHandle handle) {
    reading.lock();
    try {
      return backend.status(posted(handle, "report the status of").request);
    } finally {
      reading.unlock();
    }
  }

  @Override
  public void release(TransferHandle handle) {
    reading.lock();
    try {
      Posted<R> posted = posted(handle, "release");
      if (transfers.remove(handle.id(), posted)) {
        backend.release(posted.request);
      }
    } finally {
      reading.unlock();
    }
  }

  @Override
  public Optional<TransferTelemetry> telemetry(TransferHandle handle) {
    Objects.requireNonNull(handle, "handle");
    reading.lock();
    try {
      Posted<R> posted = transfers.get(handle.id());
      if (posted == null || posted.handle.bytes() != handle.bytes()) {
        return Optional.empty();
      }
      return backend.telemetry(posted.request);
    } finally {
      reading.unlock();
    }
  }

  @Override
  public void notify(String remoteAgent, byte[] message) {
    Objects.requireNonNull(remoteAgent, "remoteAgent");
    Objects.requireNonNull(message, "message");
    reading.lock();
    try {
      requireOpen("notify " + remoteAgent);
      if (!peers.contains(remoteAgent)) {
        throw refuse.unknownPeer("notify", remoteAgent);
      }
      backend.notify(remoteAgent, message);
    } finally {
      reading.unlock();
    }
  }

  @Override
  public List<Notification> drainNotifications() {
    reading.lock();
    try {
      if (closed) {
        throw refuse.notReceiving();
      }
      return backend.takeNotifications();
    } finally {
      reading.unlock();
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>Releases every transfer and list in the backend and deregisters every memory, then closes
   * the backend; a failure of one step is logged and the others still run.
   */
  @Override
  public void close() {
    writing.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      for (Posted<R> posted : transfers.values()) {
        quietly("releasing a transfer", () -> backend.release(posted.request));
      }
      transfers.clear();
      release(prepared.removeIf(p -> true));
      for (KvMemory memory : registered.all()) {
        quietly("deregistering " + memory, () -> backend.deregister(memory));
      }
      registered.clear();
      peers.clear();
      quietly("closing the backend", backend::close);
    } finally {
      writing.unlock();
    }
  }

  @Override
  public String toString() {
    return "AgentCore[" + backend + (handedOver ? ", handed over" : "") + "]";
  }

  // ---- the books -----------------------------------------------------------------------------

  /** Keeps a posted request under a new handle. */
  private TransferHandle keep(R request, long bytes) {
    TransferHandle handle = new TransferHandle(nextHandle.getAndIncrement(), bytes);
    transfers.put(handle.id(), new Posted<>(handle, request));
    return handle;
  }

  /** Forgets {@code remoteAgent} if it is loaded, its lists first; under the write lock. */
  private void forget(String remoteAgent) {
    if (peers.remove(remoteAgent)) {
      release(prepared.removeIf(p -> p.isOf(remoteAgent)));
      backend.unloadRemote(remoteAgent);
    }
  }

  /** Releases lists the core dropped in the backend; under the write lock. */
  private void release(List<L> lists) {
    for (L list : lists) {
      quietly("releasing a prepared list", () -> backend.releasePrepared(list));
    }
  }

  private Posted<R> posted(TransferHandle handle, String action) {
    Objects.requireNonNull(handle, "handle");
    Posted<R> posted = transfers.get(handle.id());
    if (posted == null || posted.handle.bytes() != handle.bytes()) {
      throw refuse.unknownTransfer(action, handle);
    }
    return posted;
  }

  private void requireOpen(String action) {
    if (closed) {
      throw refuse.closed(action);
    }
  }

  private void quietly(String what, Runnable step) {
    try {
      step.run();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "agent " + agentName + ": " + what + " failed: " + e.getMessage());
    }
  }

  private record Posted<R>(TransferHandle handle, R request) {}
}
