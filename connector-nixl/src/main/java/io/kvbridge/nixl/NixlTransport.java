package io.kvbridge.nixl;

import io.kvbridge.nixl.capi.NixlAgent;
import io.kvbridge.nixl.capi.NixlCapi;
import io.kvbridge.nixl.capi.NixlException;
import io.kvbridge.nixl.capi.NixlLibrary;
import io.kvbridge.nixl.capi.NixlPreparedList;
import io.kvbridge.nixl.capi.NixlStatus;
import io.kvbridge.nixl.capi.NixlTransfer;
import io.kvbridge.nixl.capi.NixlUnavailableException;
import io.kvbridge.nixl.memory.CudaRuntime;
import io.kvbridge.nixl.memory.DeviceMemory;
import io.kvbridge.nixl.memory.HostMemory;
import io.kvbridge.nixl.memory.NativeMemory;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.PreparedList;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.TransferTelemetry;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * A {@link Transport} over one NIXL agent. Memory is host memory or CUDA device memory ({@link
 * NixlOptions#memory()}), registered with NIXL as DRAM or VRAM with its device id; metadata blobs,
 * transfers and notifications are NIXL's own.
 *
 * <p>Before a transfer is posted it is checked in full, so a refused transfer moves nothing: the
 * lists must pair, the peer must be loaded, every local piece must lie inside memory registered
 * here, and NIXL must confirm ({@code nixl_capi_check_remote_md}) that the peer's registered memory
 * covers every remote piece. Failures of NIXL calls become {@link TransportException}s naming the C
 * call and its status code.
 *
 * <p>{@linkplain #prepare Prepared lists} are NIXL's prepared descriptor lists ({@code
 * nixl_capi_prep_xfer_dlist}, the peer's pieces checked by NIXL against its loaded metadata); a
 * post by indices makes one request from two of them ({@code nixl_capi_make_xfer_req}). A peer's
 * lists are released before its metadata is invalidated or loaded again, a local list before its
 * memory is deregistered, all of them when the transport closes.
 *
 * <p>Threads: safe for concurrent use. The agent is created without NIXL's own locking; one lock
 * serialises every call into it (NIXL's progress thread moves the bytes meanwhile).
 */
public final class NixlTransport implements Transport {

  private static final System.Logger LOG = System.getLogger(NixlTransport.class.getName());

  private final NixlAgent agent;
  private final MemoryKind memoryKind;
  private final int cudaDevice;
  private final ReentrantLock lock = new ReentrantLock();
  private final List<NativeMemory> registered = new ArrayList<>();
  private final Set<String> peers = new HashSet<>();
  private final Map<Long, NixlTransfer> transfers = new HashMap<>();
  private final Map<Long, Prepared> prepared = new HashMap<>();
  private long nextPreparedId = 1;
  private final Set<Long> notifying = new HashSet<>();
  private final long pumpDelayMicros;
  private ScheduledFuture<?> pump;
  private long nextTransferId = 1;
  private boolean closed;

  private NixlTransport(
      NixlAgent agent, MemoryKind memoryKind, int cudaDevice, long pumpDelayMicros) {
    this.agent = agent;
    this.memoryKind = memoryKind;
    this.cudaDevice = cudaDevice;
    this.pumpDelayMicros = pumpDelayMicros;
  }

  /**
   * Creates an agent named {@code agentName} with the backends of {@code options}, loading NIXL
   * from where they say if this process has not loaded it yet.
   *
   * @throws NixlUnavailableException if NIXL cannot be loaded, or not from where {@code options}
   *     say
   * @throws TransportException if {@code nixl.memory=vram} and no GPU is usable (with the root
   *     cause), or NIXL refuses the agent or a backend
   */
  public static NixlTransport create(String agentName, NixlOptions options) {
    NixlLibrary.require(options.library());
    MemoryKind kind = chooseMemory(options);
    NixlAgent agent;
    try {
      agent = NixlAgent.create(agentName, options.progressDelayMicros(), options.telemetry());
    } catch (NixlException e) {
      throw new TransportException(
          "cannot create NIXL agent " + agentName + ": " + e.getMessage(), e);
    }
    try {
      for (String plugin : options.backends()) {
        agent.createBackend(plugin, options.backendParameters().getOrDefault(plugin, Map.of()));
      }
    } catch (NixlException e) {
      agent.close();
      throw new TransportException(
          "cannot create the NIXL backends "
              + options.backends()
              + " of agent "
              + agentName
              + ": "
              + e.getMessage(),
          e);
    }
    LOG.log(
        Level.INFO,
        "NIXL agent {0}: backends {1}, {2} memory, progress delay {3} us",
        agentName,
        options.backends(),
        kind,
        String.valueOf(options.progressDelayMicros()));
    return new NixlTransport(agent, kind, options.cudaDevice(), options.progressDelayMicros());
  }

  private static MemoryKind chooseMemory(NixlOptions options) {
    return switch (options.memory()) {
      case DRAM -> MemoryKind.DRAM;
      case VRAM -> {
        if (CudaRuntime.probe() instanceof CudaRuntime.Unusable u) {
          throw new TransportException(
              NixlOptions.MEMORY
                  + "=vram but no GPU is usable: "
                  + u.reason()
                  + "; use "
                  + NixlOptions.MEMORY
                  + "=dram or auto on this machine",
              u.cause().orElse(null));
        }
        yield MemoryKind.VRAM;
      }
      case AUTO -> {
        CudaRuntime.Probe probe = CudaRuntime.probe();
        LOG.log(
            Level.INFO,
            "{0}=auto: {1} memory ({2})",
            NixlOptions.MEMORY,
            probe.usable() ? "device" : "host",
            CudaRuntime.describe(probe));
        yield probe.usable() ? MemoryKind.VRAM : MemoryKind.DRAM;
      }
    };
  }

  @Override
  public String agentName() {
    return agent.name();
  }

  @Override
  public MemoryKind memoryKind() {
    return memoryKind;
  }

  /** The CUDA device device memory is allocated on. */
  public int cudaDevice() {
    return cudaDevice;
  }

  @Override
  public KvMemory allocate(long sizeBytes) {
    requireOpen("allocate memory");
    try {
      return memoryKind == MemoryKind.VRAM
          ? DeviceMemory.allocate(cudaDevice, sizeBytes)
          : HostMemory.allocate(sizeBytes);
    } catch (IllegalStateException | OutOfMemoryError e) {
      throw new TransportException(
          "cannot allocate " + sizeBytes + " bytes of " + memoryKind + ": " + e.getMessage(), e);
    }
  }

  @Override
  public void register(KvMemory memory) {
    NativeMemory nativeMemory = requireNative(memory);
    locked(
        "register memory",
        () -> {
          if (registered.contains(nativeMemory)) {
            throw new IllegalStateException(memory + " is already registered with " + agentName());
          }
          agent.registerMemory(memoryType(memory.kind()), region(memory));
          registered.add(nativeMemory);
          return null;
        });
  }

  @Override
  public void deregister(KvMemory memory) {
    locked(
        "deregister memory",
        () -> {
          if (registered.contains(memory)) {
            // A prepared list holds NIXL's registration of its memory: release it first.
            releasePrepared(p -> p.touches(memory));
            registered.remove(memory);
            agent.deregisterMemory(memoryType(memory.kind()), region(memory));
          }
          return null;
        });
  }

  @Override
  public byte[] localMetadata() {
    return locked("read local metadata", agent::localMetadata);
  }

  @Override
  public String loadRemoteMetadata(byte[] metadata) {
    if (metadata.length == 0) {
      throw new TransportException("cannot load an empty metadata blob into agent " + agentName());
    }
    return locked(
        "load remote metadata",
        () -> {
          String peer = agent.loadRemoteMetadata(metadata);
          if (!peers.add(peer)) {
            releasePrepared(p -> peer.equals(p.list.remoteAgent().orElse(null)));
            // NIXL merges a second blob of a known agent into what it had, so memory the peer
            // deregistered since would stay reachable: forget the peer and load the blob afresh.
            agent.invalidateRemote(peer);
            agent.loadRemoteMetadata(metadata);
          }
          return peer;
        });
  }

  @Override
  public String peerAgentName(byte[] metadata) {
    return NixlMetadata.agentName(metadata);
  }

  @Override
  public void invalidateRemote(String agentName) {
    locked(
        "invalidate a peer",
        () -> {
          if (peers.remove(agentName)) {
            releasePrepared(p -> agentName.equals(p.list.remoteAgent().orElse(null)));
            int status = agent.invalidateRemote(agentName);
            if (status != NixlStatus.SUCCESS) {
              LOG.log(
                  Level.WARNING,
                  "nixl_capi_invalidate_remote_md({0}) returned {1}",
                  agentName,
                  NixlStatus.describe(status));
            }
          }
          return null;
        });
  }

  @Override
  public TransferHandle post(
      TransferOp op,
      DescriptorList local,
      String remoteAgent,
      DescriptorList remote,
      Optional<byte[]> notification) {
    try {
      local.checkPairsWith(remote);
    } catch (IllegalArgumentException e) {
      throw new TransportException(
          "cannot post " + postWhat(op, local, remoteAgent) + ": " + e.getMessage(), e);
    }
    // Messages are built only on failure: post runs per request.
    return locked(
        op == TransferOp.READ ? "post a READ" : "post a WRITE",
        () -> {
          if (!peers.contains(remoteAgent)) {
            requirePeer(remoteAgent, "post " + postWhat(op, local, remoteAgent));
          }
          checkLocal(local, op, remoteAgent);
          NixlTransfer transfer =
              agent.prepareCheckedTransfer(
                  op == TransferOp.READ ? NixlCapi.XFER_OP_READ : NixlCapi.XFER_OP_WRITE,
                  memoryType(local.kind()),
                  local.descriptors(),
                  remoteAgent,
                  memoryType(remote.kind()),
                  remote.descriptors(),
                  notification,
                  covered ->
                      new TransportException(
                          "cannot post "
                              + postWhat(op, local, remoteAgent)
                              + ": nixl_capi_check_remote_md returned "
                              + NixlStatus.describe(covered)
                              + ", so the "
                              + remote.kind()
                              + " pieces are not all inside memory "
                              + remoteAgent
                              + " registered when its metadata was loaded"));
          return posted(transfer, notification.isPresent(), local.totalBytes());
        });
  }

  /** Posts a prepared request and keeps it under a new handle; called under the lock. */
  private TransferHandle posted(NixlTransfer transfer, boolean notifies, long bytes) {
    int posted;
    try {
      posted = transfer.post();
    } catch (NixlException e) {
      transfer.close();
      throw e;
    }
    long id = nextTransferId++;
    transfers.put(id, transfer);
    if (notifies && posted == NixlStatus.IN_PROG) {
      notifying.add(id);
      startPump();
    }
    return new TransferHandle(id, bytes);
  }

  /**
   * {@inheritDoc}
   *
   * <p>The pieces are checked against this agent's registrations here, then prepared in NIXL
   * ({@code nixl_capi_prep_xfer_dlist}).
   */
  @Override
  public PreparedList prepare(DescriptorList local) {
    return locked(
        "prepare a descriptor list",
        () -> {
          List<NativeMemory> holding = checkLocal(local, "prepare a list of its memory");
          NixlPreparedList list =
              agent.prepareList(
                  "",
                  memoryType(local.kind()),
                  local.descriptors(),
                  status ->
                      new TransportException(
                          "agent "
                              + agentName()
                              + " cannot prepare a list of its memory: nixl_capi_prep_xfer_dlist"
                              + " returned "
                              + NixlStatus.describe(status)));
          return keep(new PreparedList(nextPreparedId++, Optional.empty(), local), list, holding);
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>NIXL checks the pieces against the peer's loaded metadata ({@code
   * nixl_capi_prep_xfer_dlist}).
   */
  @Override
  public PreparedList prepare(String remoteAgent, DescriptorList remote) {
    return locked(
        "prepare a descriptor list of " + remoteAgent,
        () -> {
          requirePeer(remoteAgent, "prepare a list of its memory");
          NixlPreparedList list =
              agent.prepareList(
                  remoteAgent,
                  memoryType(remote.kind()),
                  remote.descriptors(),
                  status ->
                      new TransportException(
                          "agent "
                              + agentName()
                              + " cannot prepare a list of the memory of "
                              + remoteAgent
                              + ": nixl_capi_prep_xfer_dlist returned "
                              + NixlStatus.describe(status)
                              + ", so the "
                              + remote.kind()
                              + " pieces are not all inside memory "
                              + remoteAgent
                              + " registered when its metadata was loaded"));
          return keep(
              new PreparedList(nextPreparedId++, Optional.of(remoteAgent), remote),
              list,
              List.of());
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>Per transfer: the lists are looked up, the indices and the lengths they select checked, and
   * one NIXL request made from the prepared lists ({@code nixl_capi_make_xfer_req}) and posted.
   */
  @Override
  public TransferHandle post(
      TransferOp op,
      PreparedList local,
      int[] localIndices,
      PreparedList remote,
      int[] remoteIndices,
      Optional<byte[]> notification) {
    // Messages are built only on failure: post runs per request.
    return locked(
        op == TransferOp.READ ? "post a READ" : "post a WRITE",
        () -> {
          Prepared mine = usable(local, op);
          Prepared theirs = usable(remote, op);
          PreparedList.requireSides(op, local, remote);
          long bytes = checkSelection(op, mine, localIndices, theirs, remoteIndices);
          NixlTransfer transfer =
              agent.makeTransfer(
                  op == TransferOp.READ ? NixlCapi.XFER_OP_READ : NixlCapi.XFER_OP_WRITE,
                  mine.nativeList,
                  localIndices,
                  theirs.nativeList,
                  remoteIndices,
                  notification);
          return posted(transfer, notification.isPresent(), bytes);
        });
  }

  @Override
  public void release(PreparedList list) {
    lock.lock();
    try {
      Prepared known = prepared.get(list.id());
      if (known != null && known.list == list) {
        prepared.remove(list.id());
        if (!closed) {
          known.nativeList.close();
        }
      }
    } catch (NixlException e) {
      throw new TransportException(e.getMessage(), e);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public TransferStatus status(TransferHandle handle) {
    return locked(
        "read a transfer's status",
        () -> {
          NixlTransfer transfer = transfers.get(handle.id());
          if (transfer == null) {
            throw new TransportException(
                "transfer " + handle.id() + " of agent " + agentName() + " is unknown or released");
          }
          int status = transfer.status();
          return switch (status) {
            case NixlStatus.SUCCESS -> TransferStatus.DONE;
            case NixlStatus.IN_PROG -> TransferStatus.IN_PROGRESS;
            default ->
                new TransferStatus.Failed(
                    "nixl_capi_get_xfer_status returned "
                        + NixlStatus.describe(status)
                        + " for transfer "
                        + handle.id()
                        + " of agent "
                        + agentName());
          };
        });
  }

  @Override
  public void release(TransferHandle handle) {
    lock.lock();
    try {
      NixlTransfer transfer = transfers.remove(handle.id());
      notifying.remove(handle.id());
      if (transfer != null && !closed) {
        transfer.close();
      }
    } catch (NixlException e) {
      throw new TransportException(e.getMessage(), e);
    } finally {
      lock.unlock();
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>NIXL's own measurement ({@code nixl_capi_get_xfer_telemetry}) when the agent captures it
   * ({@value NixlOptions#TELEMETRY}{@code =true}): the post's time and the transfer's, from its
   * post until NIXL saw it complete, in whole microseconds. NIXL keeps it in the transfer request,
   * which {@link #release(TransferHandle)} frees; a closed transport has released every transfer.
   */
  @Override
  public Optional<TransferTelemetry> telemetry(TransferHandle handle) {
    if (!agent.capturesTelemetry()) {
      return Optional.empty(); // asked once per finished read: no lock for an agent without it
    }
    lock.lock();
    try {
      NixlTransfer transfer = closed ? null : transfers.get(handle.id());
      return transfer == null ? Optional.empty() : transfer.telemetry().map(NixlTransport::neutral);
    } finally {
      lock.unlock();
    }
  }

  private static TransferTelemetry neutral(NixlTransfer.Telemetry t) {
    return new TransferTelemetry(
        Duration.of(t.postMicros(), ChronoUnit.MICROS),
        Duration.of(t.transferMicros(), ChronoUnit.MICROS),
        t.bytes(),
        Math.toIntExact(t.descriptors()));
  }

  @Override
  public void notify(String remoteAgent, byte[] message) {
    locked(
        "notify " + remoteAgent,
        () -> {
          requirePeer(remoteAgent, "notify it");
          agent.sendNotification(remoteAgent, message);
          return null;
        });
  }

  @Override
  public List<Notification> drainNotifications() {
    return locked("drain notifications", agent::takeNotifications);
  }

  @Override
  public void close() {
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      notifying.clear();
      stopPump();
      for (NixlTransfer transfer : transfers.values()) {
        closeQuietly("releasing a transfer", transfer::close);
      }
      transfers.clear();
      for (Prepared p : prepared.values()) {
        closeQuietly("releasing a prepared list", p.nativeList::close);
      }
      prepared.clear();
      for (NativeMemory memory : registered) {
        closeQuietly(
            "deregistering " + memory,
            () -> agent.deregisterMemory(memoryType(memory.kind()), region(memory)));
      }
      registered.clear();
      peers.clear();
      closeQuietly("destroying the agent", agent::close);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public String toString() {
    return "NixlTransport[" + agentName() + ", " + memoryKind + "]";
  }

  /**
   * NIXL sends a transfer's notification when its initiator sees the transfer complete, in {@code
   * nixl_capi_get_xfer_status}. So that a notification never waits for the owner's next status
   * poll, the shared pump thread polls transfers with a notification until they settle, every
   * progress delay, and stops when none is left. Called under the lock.
   */
  private void startPump() {
    if (pump == null) {
      pump =
          Pump.EXECUTOR.scheduleWithFixedDelay(
              this::pumpOnce, pumpDelayMicros, pumpDelayMicros, TimeUnit.MICROSECONDS);
    }
  }

  private void stopPump() {
    if (pump != null) {
      pump.cancel(false);
      pump = null;
    }
  }

  private void pumpOnce() {
    lock.lock();
    try {
      for (Iterator<Long> it = notifying.iterator(); it.hasNext(); ) {
        NixlTransfer transfer = transfers.get(it.next());
        if (transfer == null || transfer.status() != NixlStatus.IN_PROG) {
          it.remove();
        }
      }
      if (notifying.isEmpty()) {
        stopPump();
      }
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "polling transfers of agent " + agentName() + ": " + e.getMessage());
      notifying.clear();
      stopPump();
    } finally {
      lock.unlock();
    }
  }

  /** The one daemon thread that polls notifying transfers of every transport in the JVM. */
  private static final class Pump {
    static final ScheduledExecutorService EXECUTOR =
        Executors.newSingleThreadScheduledExecutor(
            runnable -> {
              Thread thread = new Thread(runnable, "kvbridge-nixl-notify");
              thread.setDaemon(true);
              return thread;
            });
  }

  private static String postWhat(TransferOp op, DescriptorList local, String remoteAgent) {
    return op + " of " + local.descriptors().size() + " pieces with " + remoteAgent;
  }

  private void checkLocal(DescriptorList local, TransferOp op, String remoteAgent) {
    List<Descriptor> pieces = local.descriptors();
    for (int i = 0; i < pieces.size(); i++) {
      if (holding(local.kind(), pieces.get(i)) == null) {
        throw outsideRegistered(local, i, "post " + postWhat(op, local, remoteAgent));
      }
    }
  }

  /** The registered memories that hold the pieces of {@code local}; throws if one holds none. */
  private List<NativeMemory> checkLocal(DescriptorList local, String what) {
    List<NativeMemory> holding = new ArrayList<>(1);
    List<Descriptor> pieces = local.descriptors();
    for (int i = 0; i < pieces.size(); i++) {
      NativeMemory memory = holding(local.kind(), pieces.get(i));
      if (memory == null) {
        throw outsideRegistered(local, i, what);
      }
      if (!holding.contains(memory)) {
        holding.add(memory);
      }
    }
    return holding;
  }

  /** The registered memory that holds all of {@code d}, or null. */
  private NativeMemory holding(MemoryKind kind, Descriptor d) {
    for (NativeMemory memory : registered) {
      if (memory.kind() == kind
          && memory.deviceId() == d.deviceId()
          && d.within(memory.address(), memory.sizeBytes())) {
        return memory;
      }
    }
    return null;
  }

  private TransportException outsideRegistered(DescriptorList local, int i, String what) {
    Descriptor d = local.descriptors().get(i);
    return new TransportException(
        "cannot "
            + what
            + ": local piece "
            + i
            + " ("
            + local.kind()
            + " [0x"
            + Long.toHexString(d.address())
            + ", +"
            + d.length()
            + ") on device "
            + d.deviceId()
            + ") lies outside every memory registered with agent "
            + agentName());
  }

  /** Keeps a prepared list under its id; called under the lock. */
  private PreparedList keep(PreparedList list, NixlPreparedList prepared, List<NativeMemory> in) {
    this.prepared.put(list.id(), new Prepared(list, prepared, in));
    return list;
  }

  /** The list as this agent prepared it, if still usable; called under the lock. */
  private Prepared usable(PreparedList list, TransferOp op) {
    Prepared known = prepared.get(list.id());
    if (known == null || (known.list != list && !known.list.equals(list))) {
      throw new TransportException(
          "agent "
              + agentName()
              + " cannot post a "
              + op
              + " from "
              + list
              + ": it was not prepared here, was released, or is no longer usable (its peer was"
              + " invalidated or reloaded, or its memory deregistered); prepare it again");
    }
    return known;
  }

  /**
   * Checks that the indices select pieces inside both lists that pair in length; returns the bytes
   * they hold. NIXL checks the same, but would say less about which piece is wrong.
   */
  private static long checkSelection(
      TransferOp op, Prepared local, int[] localIndices, Prepared remote, int[] remoteIndices) {
    if (localIndices.length != remoteIndices.length) {
      throw new TransportException(
          "cannot post a "
              + op
              + ": "
              + localIndices.length
              + " local indices and "
              + remoteIndices.length
              + " remote ones; they pair position by position");
    }
    local.list.checkIndices(localIndices);
    remote.list.checkIndices(remoteIndices);
    long bytes = 0;
    for (int i = 0; i < localIndices.length; i++) {
      long length = local.lengths[localIndices[i]];
      if (length != remote.lengths[remoteIndices[i]]) {
        throw new TransportException(
            "cannot post a "
                + op
                + ": at position "
                + i
                + " local piece "
                + localIndices[i]
                + " has "
                + length
                + " bytes, remote piece "
                + remoteIndices[i]
                + " has "
                + remote.lengths[remoteIndices[i]]);
      }
      bytes += length;
    }
    return bytes;
  }

  /** Releases the prepared lists {@code which} selects; called under the lock. */
  private void releasePrepared(Predicate<Prepared> which) {
    for (Iterator<Prepared> it = prepared.values().iterator(); it.hasNext(); ) {
      Prepared p = it.next();
      if (which.test(p)) {
        it.remove();
        closeQuietly("releasing a prepared list", p.nativeList::close);
      }
    }
  }

  /** A list this agent prepared: NIXL's handle, each piece's length, the memory it lies in. */
  private static final class Prepared {
    final PreparedList list;
    final NixlPreparedList nativeList;
    final long[] lengths;
    final List<NativeMemory> memories;

    Prepared(PreparedList list, NixlPreparedList nativeList, List<NativeMemory> memories) {
      this.list = list;
      this.nativeList = nativeList;
      this.memories = memories;
      this.lengths = list.lengths();
    }

    boolean touches(KvMemory memory) {
      return memories.contains(memory);
    }
  }

  private void requirePeer(String remoteAgent, String what) {
    if (!peers.contains(remoteAgent)) {
      throw new TransportException(
          "agent "
              + agentName()
              + " cannot "
              + what
              + ": peer "
              + remoteAgent
              + " is unknown (its metadata was never loaded, or was invalidated)");
    }
  }

  /** Runs {@code action} under the lock on an open transport, mapping NIXL failures. */
  private <T> T locked(String what, Supplier<T> action) {
    lock.lock();
    try {
      requireOpen(what);
      return action.get();
    } catch (NixlException e) {
      throw new TransportException(e.getMessage(), e);
    } finally {
      lock.unlock();
    }
  }

  private void requireOpen(String what) {
    if (closed) {
      throw new TransportException("cannot " + what + ": agent " + agentName() + " is closed");
    }
  }

  private static void closeQuietly(String what, Runnable action) {
    try {
      action.run();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "closing a NIXL transport: " + what + " failed: " + e.getMessage());
    }
  }

  private static NativeMemory requireNative(KvMemory memory) {
    if (memory instanceof NativeMemory nativeMemory && nativeMemory.isOpen()) {
      return nativeMemory;
    }
    throw new IllegalArgumentException(
        memory
            + " cannot be registered with NIXL: use memory allocated by a NixlTransport that is"
            + " still open");
  }

  private static Descriptor region(KvMemory memory) {
    return new Descriptor(memory.address(), memory.sizeBytes(), memory.deviceId());
  }

  private static int memoryType(MemoryKind kind) {
    return kind == MemoryKind.VRAM ? NixlCapi.MEM_VRAM : NixlCapi.MEM_DRAM;
  }
}
