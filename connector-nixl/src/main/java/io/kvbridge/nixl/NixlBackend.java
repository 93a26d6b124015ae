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
import io.kvbridge.transfer.AgentCore;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.ReadCost;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.TransferTelemetry;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportBackend;
import io.kvbridge.transfer.TransportException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Collections;
import java.util.IdentityHashMap;
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
import java.util.function.Supplier;

/**
 * The mechanism of one NIXL agent, under an {@link AgentCore} that keeps its books and checks the
 * transport contract. Memory is host memory or CUDA device memory ({@link NixlOptions#memory()}),
 * registered with NIXL as DRAM or VRAM with its device id; metadata blobs, transfers and
 * notifications are NIXL's own. Failures of NIXL calls become {@link TransportException}s naming
 * the C call and its status code.
 *
 * <p>NIXL's own checks stay where they guard the hardware: {@link #covers} is {@code
 * nixl_capi_check_remote_md}, asked by the core before a remote list is prepared or a transfer
 * posted (and the core's read lock keeps the peer's metadata as it was checked until the request is
 * made); {@code nixl_capi_prep_xfer_dlist} checks the pieces of a prepared list again, and {@code
 * nixl_capi_create_xfer_req} and {@code nixl_capi_make_xfer_req} each piece of a request. Prepared
 * lists are NIXL's prepared descriptor lists; a post by indices makes one request from two of them
 * ({@code nixl_capi_make_xfer_req}).
 *
 * <p>Threads: safe for concurrent use. The agent is created without NIXL's own locking; one lock
 * serialises every call into it (NIXL's progress thread moves the bytes meanwhile).
 */
public final class NixlBackend implements TransportBackend<NixlPreparedList, NixlTransfer> {

  private static final System.Logger LOG = System.getLogger(NixlBackend.class.getName());

  private final NixlAgent agent;
  private final MemoryKind memoryKind;
  private final int cudaDevice;
  private final ReentrantLock lock = new ReentrantLock();
  private final Set<NixlTransfer> notifying = Collections.newSetFromMap(new IdentityHashMap<>());
  private final long pumpDelayMicros;
  private ScheduledFuture<?> pump;

  private NixlBackend(
      NixlAgent agent, MemoryKind memoryKind, int cudaDevice, long pumpDelayMicros) {
    this.agent = agent;
    this.memoryKind = memoryKind;
    this.cudaDevice = cudaDevice;
    this.pumpDelayMicros = pumpDelayMicros;
  }

  /**
   * A transport over a new NIXL agent named {@code agentName}: an {@link AgentCore} over {@link
   * #create}.
   *
   * @throws NixlUnavailableException as {@link #create}
   * @throws TransportException as {@link #create}
   */
  public static Transport transport(String agentName, NixlOptions options) {
    return new AgentCore<>(create(agentName, options));
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
  public static NixlBackend create(String agentName, NixlOptions options) {
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
    return new NixlBackend(agent, kind, options.cudaDevice(), options.progressDelayMicros());
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

  /**
   * On host memory, what BENCHMARKS.md measured of NIXL's UCX backend (its real-size rows, the cost
   * model's table): about 1.7 µs per descriptor and 0.4 ns per byte over shared memory. On device
   * memory the descriptor's cost is the same bookkeeping, and a byte crosses NVLink or the NIC at
   * tens of GB/s: 0.02 ns per byte, not measured here (no GPU on the machine of record).
   */
  @Override
  public ReadCost readCost() {
    return memoryKind == MemoryKind.VRAM ? DEVICE_READ : HOST_READ;
  }

  private static final ReadCost HOST_READ = new ReadCost(1_700, 0.4);
  private static final ReadCost DEVICE_READ = new ReadCost(1_700, 0.02);

  /** The CUDA device device memory is allocated on. */
  public int cudaDevice() {
    return cudaDevice;
  }

  @Override
  public KvMemory allocate(long sizeBytes) {
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
    if (!(memory instanceof NativeMemory nativeMemory) || !nativeMemory.isOpen()) {
      throw new TransportException(
          memory
              + " cannot be registered with NIXL: use memory allocated by a NIXL transport that is"
              + " still open");
    }
    locked(() -> agent.registerMemory(memoryType(memory.kind()), region(memory)));
  }

  @Override
  public void deregister(KvMemory memory) {
    locked(() -> agent.deregisterMemory(memoryType(memory.kind()), region(memory)));
  }

  @Override
  public byte[] localMetadata() {
    return locked(agent::localMetadata);
  }

  @Override
  public String peerAgentName(byte[] metadata) {
    return NixlMetadata.agentName(metadata);
  }

  @Override
  public String loadRemote(byte[] metadata, boolean replacing) {
    return locked(
        () -> {
          String peer = agent.loadRemoteMetadata(metadata);
          if (replacing) {
            // NIXL merges a second blob of a known agent into what it had, so memory the peer
            // deregistered since would stay reachable: forget the peer and load the blob afresh.
            agent.invalidateRemote(peer);
            agent.loadRemoteMetadata(metadata);
          }
          return peer;
        });
  }

  @Override
  public void unloadRemote(String remoteAgent) {
    int status = locked(() -> agent.invalidateRemote(remoteAgent));
    if (status != NixlStatus.SUCCESS) {
      LOG.log(
          Level.WARNING,
          "nixl_capi_invalidate_remote_md({0}) returned {1}",
          remoteAgent,
          NixlStatus.describe(status));
    }
  }

  /** {@inheritDoc} NIXL answers: {@code nixl_capi_check_remote_md}. */
  @Override
  public boolean covers(String remoteAgent, DescriptorList remote) {
    return locked(
            () -> agent.checkRemote(remoteAgent, memoryType(remote.kind()), remote.descriptors()))
        == NixlStatus.SUCCESS;
  }

  @Override
  public NixlPreparedList prepare(Optional<String> remoteAgent, DescriptorList pieces) {
    return locked(
        () ->
            agent.prepareList(
                remoteAgent.orElse(""),
                memoryType(pieces.kind()),
                pieces.descriptors(),
                status ->
                    new TransportException(
                        "agent "
                            + agentName()
                            + " cannot prepare a list of "
                            + remoteAgent.map(a -> "the memory of " + a).orElse("its memory")
                            + ": nixl_capi_prep_xfer_dlist returned "
                            + NixlStatus.describe(status))));
  }

  @Override
  public void releasePrepared(NixlPreparedList list) {
    locked(list::close);
  }

  @Override
  public NixlTransfer post(
      TransferOp op,
      DescriptorList local,
      String remoteAgent,
      DescriptorList remote,
      Optional<byte[]> notification) {
    return locked(
        () ->
            posted(
                agent.prepareTransfer(
                    nixlOp(op),
                    memoryType(local.kind()),
                    local.descriptors(),
                    remoteAgent,
                    memoryType(remote.kind()),
                    remote.descriptors(),
                    notification),
                notification.isPresent()));
  }

  @Override
  public NixlTransfer post(
      TransferOp op,
      NixlPreparedList local,
      int[] localIndices,
      String remoteAgent,
      NixlPreparedList remote,
      int[] remoteIndices,
      Optional<byte[]> notification) {
    return locked(
        () ->
            posted(
                agent.makeTransfer(
                    nixlOp(op), local, localIndices, remote, remoteIndices, notification),
                notification.isPresent()));
  }

  /** Posts a prepared request; called under the lock. */
  private NixlTransfer posted(NixlTransfer transfer, boolean notifies) {
    int posted;
    try {
      posted = transfer.post();
    } catch (NixlException e) {
      transfer.close();
      throw e;
    }
    if (notifies && posted == NixlStatus.IN_PROG) {
      notifying.add(transfer);
      startPump();
    }
    return transfer;
  }

  @Override
  public TransferStatus status(NixlTransfer transfer) {
    int status = locked(transfer::status);
    return switch (status) {
      case NixlStatus.SUCCESS -> TransferStatus.DONE;
      case NixlStatus.IN_PROG -> TransferStatus.IN_PROGRESS;
      default ->
          new TransferStatus.Failed(
              "nixl_capi_get_xfer_status returned "
                  + NixlStatus.describe(status)
                  + " for a transfer of agent "
                  + agentName());
    };
  }

  @Override
  public void release(NixlTransfer transfer) {
    locked(
        () -> {
          notifying.remove(transfer);
          transfer.close();
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>NIXL's own measurement ({@code nixl_capi_get_xfer_telemetry}) when the agent captures it
   * ({@value NixlOptions#TELEMETRY}{@code =true}): the post's time and the transfer's, from its
   * post until NIXL saw it complete, in whole microseconds. NIXL keeps it in the transfer request,
   * which releasing frees.
   */
  @Override
  public Optional<TransferTelemetry> telemetry(NixlTransfer transfer) {
    if (!agent.capturesTelemetry()) {
      return Optional.empty(); // asked once per finished read: no lock for an agent without it
    }
    return locked(transfer::telemetry).map(NixlBackend::neutral);
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
    locked(() -> agent.sendNotification(remoteAgent, message));
  }

  @Override
  public List<Notification> takeNotifications() {
    return locked(agent::takeNotifications);
  }

  @Override
  public void close() {
    lock.lock();
    try {
      notifying.clear();
      stopPump();
      try {
        agent.close();
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, "destroying NIXL agent " + agentName() + ": " + e.getMessage());
      }
    } finally {
      lock.unlock();
    }
  }

  @Override
  public String toString() {
    return "NixlBackend[" + agentName() + ", " + memoryKind + "]";
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
      for (Iterator<NixlTransfer> it = notifying.iterator(); it.hasNext(); ) {
        if (it.next().status() != NixlStatus.IN_PROG) {
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

  /** The one daemon thread that polls notifying transfers of every agent in the JVM. */
  private static final class Pump {
    static final ScheduledExecutorService EXECUTOR =
        Executors.newSingleThreadScheduledExecutor(
            runnable -> {
              Thread thread = new Thread(runnable, "kvbridge-nixl-notify");
              thread.setDaemon(true);
              return thread;
            });
  }

  /** Runs {@code action} under the lock, mapping NIXL failures. */
  private <T> T locked(Supplier<T> action) {
    lock.lock();
    try {
      return action.get();
    } catch (NixlException e) {
      throw new TransportException(e.getMessage(), e);
    } finally {
      lock.unlock();
    }
  }

  private void locked(Runnable action) {
    locked(
        () -> {
          action.run();
          return null;
        });
  }

  private static Descriptor region(KvMemory memory) {
    return new Descriptor(memory.address(), memory.sizeBytes(), memory.deviceId());
  }

  private static int nixlOp(TransferOp op) {
    return op == TransferOp.READ ? NixlCapi.XFER_OP_READ : NixlCapi.XFER_OP_WRITE;
  }

  private static int memoryType(MemoryKind kind) {
    return kind == MemoryKind.VRAM ? NixlCapi.MEM_VRAM : NixlCapi.MEM_DRAM;
  }
}
