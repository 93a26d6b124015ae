package io.kvbridge.nixl.capi;

import io.kvbridge.nixl.capi.NixlCapi.AgentConfig;
import io.kvbridge.nixl.capi.NixlCapi.AgentHandle;
import io.kvbridge.nixl.capi.NixlCapi.BackendHandle;
import io.kvbridge.nixl.capi.NixlCapi.MemListHandle;
import io.kvbridge.nixl.capi.NixlCapi.NotifMapHandle;
import io.kvbridge.nixl.capi.NixlCapi.OptArgsHandle;
import io.kvbridge.nixl.capi.NixlCapi.ParamIterHandle;
import io.kvbridge.nixl.capi.NixlCapi.ParamsHandle;
import io.kvbridge.nixl.capi.NixlCapi.PreparedDlistHandle;
import io.kvbridge.nixl.capi.NixlCapi.RegDlistHandle;
import io.kvbridge.nixl.capi.NixlCapi.StringListHandle;
import io.kvbridge.nixl.capi.NixlCapi.XferDlistHandle;
import io.kvbridge.nixl.capi.NixlCapi.XferReqHandle;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.Notification;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.IntFunction;
import org.bytedeco.javacpp.BoolPointer;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;
import org.bytedeco.javacpp.SizeTPointer;

/**
 * One NIXL agent, owning its native handle and everything made from it: backends, registrations,
 * prepared descriptor lists ({@link NixlPreparedList}), transfer requests ({@link NixlTransfer})
 * and the notification map. Every failure status becomes a {@link NixlException} naming the C call;
 * every native object is freed exactly once, as NIXL's C API prescribes (metadata blobs and remote
 * agent names with {@code free()}, transfer requests released before their handle is destroyed).
 *
 * <p>Threads: not thread-safe. The agent is created without NIXL's own locking, so its owner
 * serialises every call; NIXL's progress thread runs on its own.
 */
public final class NixlAgent implements AutoCloseable {

  private final String name;
  private final boolean captureTelemetry;
  private final AgentHandle handle;
  private final NotifMapHandle notifications;
  private final Set<NixlTransfer> transfers = Collections.newSetFromMap(new IdentityHashMap<>());
  private final Set<NixlPreparedList> preparedLists =
      Collections.newSetFromMap(new IdentityHashMap<>());
  private boolean closed;

  private NixlAgent(
      String name, boolean captureTelemetry, AgentHandle handle, NotifMapHandle notifications) {
    this.name = name;
    this.captureTelemetry = captureTelemetry;
    this.handle = handle;
    this.notifications = notifications;
  }

  /**
   * Creates an agent with a progress thread that sleeps {@code progressDelayMicros} between polls
   * (0 spins a core per agent), without a metadata listener.
   *
   * @throws NixlUnavailableException if NIXL cannot be loaded
   * @throws NixlException if NIXL refuses the agent
   */
  public static NixlAgent create(String name, long progressDelayMicros, boolean captureTelemetry) {
    Objects.requireNonNull(name, "name");
    if (progressDelayMicros < 0) {
      throw new IllegalArgumentException(
          "progress delay must be at least 0 microseconds, got " + progressDelayMicros);
    }
    NixlLibrary.require();
    AgentHandle agent = new AgentHandle();
    try (AgentConfig cfg = new AgentConfig()) {
      cfg.enable_prog_thread(true)
          .enable_listen_thread(false)
          .listen_port(0)
          .thread_sync(NixlCapi.THREAD_SYNC_NONE)
          .num_workers(1)
          .pthr_delay_us(progressDelayMicros)
          .lthr_delay_us(0)
          .capture_telemetry(captureTelemetry);
      check(
          NixlCapi.nixl_capi_create_configured_agent(name, cfg, agent),
          "nixl_capi_create_configured_agent",
          "creating agent " + name);
    }
    NotifMapHandle map = new NotifMapHandle();
    int status = NixlCapi.nixl_capi_create_notif_map(map);
    if (status != NixlStatus.SUCCESS) {
      NixlCapi.nixl_capi_destroy_agent(agent);
      throw new NixlException("nixl_capi_create_notif_map", status, "creating agent " + name);
    }
    return new NixlAgent(name, captureTelemetry, agent, map);
  }

  /** The agent's name, as peers see it. */
  public String name() {
    return name;
  }

  /** Whether transfers of this agent record telemetry. */
  public boolean capturesTelemetry() {
    return captureTelemetry;
  }

  /** The backend plugins NIXL found in its plugin directory. */
  public List<String> availablePlugins() {
    requireOpen();
    StringListHandle list = new StringListHandle();
    check(
        NixlCapi.nixl_capi_get_available_plugins(handle, list),
        "nixl_capi_get_available_plugins",
        "listing plugins");
    try (SizeTPointer size = new SizeTPointer(1);
        PointerPointer<Pointer> str = new PointerPointer<>(1)) {
      check(NixlCapi.nixl_capi_string_list_size(list, size), "nixl_capi_string_list_size", "");
      List<String> names = new ArrayList<>();
      for (long i = 0; i < size.get(); i++) {
        check(
            NixlCapi.nixl_capi_string_list_get(list, i, str),
            "nixl_capi_string_list_get",
            "reading plugin " + i);
        names.add(new BytePointer(str.get(0)).getString());
      }
      return List.copyOf(names);
    } finally {
      NixlCapi.nixl_capi_destroy_string_list(list);
    }
  }

  /**
   * A plugin's supported memory types and default backend parameters.
   *
   * @param memoryTypes {@link NixlCapi#MEM_DRAM}, {@link NixlCapi#MEM_VRAM}, ...
   * @param defaults parameter names and their default values
   */
  public record PluginInfo(List<Integer> memoryTypes, Map<String, String> defaults) {}

  /** What {@code plugin} supports and its default parameters (loads the plugin). */
  public PluginInfo pluginInfo(String plugin) {
    requireOpen();
    MemListHandle mems = new MemListHandle();
    ParamsHandle params = new ParamsHandle();
    check(
        NixlCapi.nixl_capi_get_plugin_params(handle, plugin, mems, params),
        "nixl_capi_get_plugin_params",
        "loading plugin " + plugin + " (is it in NIXL_PLUGIN_DIR?)");
    try (SizeTPointer size = new SizeTPointer(1)) {
      check(NixlCapi.nixl_capi_mem_list_size(mems, size), "nixl_capi_mem_list_size", plugin);
      List<Integer> types = new ArrayList<>();
      int[] type = new int[1];
      for (long i = 0; i < size.get(); i++) {
        check(NixlCapi.nixl_capi_mem_list_get(mems, i, type), "nixl_capi_mem_list_get", plugin);
        types.add(type[0]);
      }
      return new PluginInfo(List.copyOf(types), readParams(params));
    } finally {
      NixlCapi.nixl_capi_destroy_mem_list(mems);
      NixlCapi.nixl_capi_destroy_params(params);
    }
  }

  /**
   * Creates a backend of {@code plugin} with its defaults overridden by {@code overrides}. The
   * backend lives until the agent is closed.
   */
  public void createBackend(String plugin, Map<String, String> overrides) {
    requireOpen();
    Map<String, String> merged = new LinkedHashMap<>(pluginInfo(plugin).defaults());
    merged.putAll(overrides);
    ParamsHandle params = new ParamsHandle();
    check(NixlCapi.nixl_capi_create_params(params), "nixl_capi_create_params", plugin);
    BackendHandle backend = new BackendHandle();
    try {
      for (Map.Entry<String, String> e : merged.entrySet()) {
        check(
            NixlCapi.nixl_capi_params_add(params, e.getKey(), e.getValue()),
            "nixl_capi_params_add",
            "setting " + plugin + " parameter " + e.getKey());
      }
      check(
          NixlCapi.nixl_capi_create_backend(handle, plugin, params, backend),
          "nixl_capi_create_backend",
          "creating backend " + plugin + " with " + merged);
    } finally {
      NixlCapi.nixl_capi_destroy_params(params);
    }
    // Only the handle is freed: the backend belongs to the agent until it is destroyed.
    NixlCapi.nixl_capi_destroy_backend(backend);
  }

  /** Registers one region of {@code memoryType} with every backend. */
  public void registerMemory(int memoryType, Descriptor region) {
    registration(memoryType, region, true);
  }

  /** Deregisters a region registered earlier. */
  public void deregisterMemory(int memoryType, Descriptor region) {
    registration(memoryType, region, false);
  }

  /** This agent's metadata blob (binary, may hold NUL bytes). */
  public byte[] localMetadata() {
    requireOpen();
    try (PointerPointer<Pointer> data = new PointerPointer<>(1);
        SizeTPointer len = new SizeTPointer(1)) {
      check(
          NixlCapi.nixl_capi_get_local_md(handle, data, len),
          "nixl_capi_get_local_md",
          "reading agent " + name + "'s metadata");
      Pointer blob = data.get(0);
      try {
        return copy(blob, len.get());
      } finally {
        Pointer.free(blob);
      }
    }
  }

  /** Loads a peer's metadata blob and returns the peer's agent name. */
  public String loadRemoteMetadata(byte[] blob) {
    requireOpen();
    try (PointerPointer<Pointer> remote = new PointerPointer<>(1)) {
      check(
          NixlCapi.nixl_capi_load_remote_md(handle, blob, blob.length, remote),
          "nixl_capi_load_remote_md",
          "loading a metadata blob of " + blob.length + " bytes into agent " + name);
      Pointer remoteName = remote.get(0);
      try {
        return new BytePointer(remoteName).getString();
      } finally {
        Pointer.free(remoteName);
      }
    }
  }

  /** Forgets a peer; returns the status ({@link NixlStatus#ERROR_NOT_FOUND} if unknown). */
  public int invalidateRemote(String remoteAgent) {
    requireOpen();
    return NixlCapi.nixl_capi_invalidate_remote_md(handle, remoteAgent);
  }

  /**
   * Whether {@code remoteAgent} is loaded and its registered memory covers {@code descriptors}: the
   * raw status, {@link NixlStatus#ERROR_NOT_FOUND} when not.
   */
  public int checkRemote(String remoteAgent, int memoryType, List<Descriptor> descriptors) {
    requireOpen();
    XferDlistHandle list = transferList(memoryType, descriptors);
    try {
      return NixlCapi.nixl_capi_check_remote_md(handle, remoteAgent, list);
    } finally {
      NixlCapi.nixl_capi_destroy_xfer_dlist(list);
    }
  }

  /**
   * Prepares (does not post) a transfer between local and {@code remoteAgent}'s memory.
   *
   * @param op {@link NixlCapi#XFER_OP_READ} or {@link NixlCapi#XFER_OP_WRITE}
   * @param notification sent to the remote agent once the transfer completes
   */
  public NixlTransfer prepareTransfer(
      int op,
      int localType,
      List<Descriptor> local,
      String remoteAgent,
      int remoteType,
      List<Descriptor> remote,
      Optional<byte[]> notification) {
    return prepare(op, localType, local, remoteAgent, remoteType, remote, notification, null);
  }

  /**
   * Like {@link #prepareTransfer}, but first has NIXL confirm ({@code nixl_capi_check_remote_md})
   * that {@code remoteAgent} is loaded and its registered memory covers {@code remote}, on the same
   * descriptor list the request is then made from.
   *
   * @param uncovered makes the exception thrown when the check returns a status other than {@link
   *     NixlStatus#SUCCESS} (given that status); nothing is prepared then
   */
  public NixlTransfer prepareCheckedTransfer(
      int op,
      int localType,
      List<Descriptor> local,
      String remoteAgent,
      int remoteType,
      List<Descriptor> remote,
      Optional<byte[]> notification,
      IntFunction<? extends RuntimeException> uncovered) {
    Objects.requireNonNull(uncovered, "uncovered");
    return prepare(op, localType, local, remoteAgent, remoteType, remote, notification, uncovered);
  }

  private NixlTransfer prepare(
      int op,
      int localType,
      List<Descriptor> local,
      String remoteAgent,
      int remoteType,
      List<Descriptor> remote,
      Optional<byte[]> notification,
      IntFunction<? extends RuntimeException> uncovered) {
    requireOpen();
    XferDlistHandle remoteList = transferList(remoteType, remote);
    XferDlistHandle localList = null;
    OptArgsHandle args = null;
    try {
      if (uncovered != null) {
        int covered = NixlCapi.nixl_capi_check_remote_md(handle, remoteAgent, remoteList);
        if (covered != NixlStatus.SUCCESS) {
          throw uncovered.apply(covered);
        }
      }
      localList = transferList(localType, local);
      if (notification.isPresent()) {
        args = notificationArgs(notification.get());
      }
      XferReqHandle req = new XferReqHandle();
      int created =
          NixlCapi.nixl_capi_create_xfer_req(
              handle, op, localList, remoteList, remoteAgent, req, args);
      if (created < 0) {
        throw new NixlException(
            "nixl_capi_create_xfer_req",
            created,
            (op == NixlCapi.XFER_OP_READ ? "preparing a READ from " : "preparing a WRITE to ")
                + remoteAgent
                + " of "
                + local.size()
                + " descriptors");
      }
      NixlTransfer transfer = new NixlTransfer(this, req, remoteAgent);
      transfers.add(transfer);
      return transfer;
    } finally {
      if (args != null) {
        NixlCapi.nixl_capi_destroy_opt_args(args);
      }
      if (localList != null) {
        NixlCapi.nixl_capi_destroy_xfer_dlist(localList);
      }
      NixlCapi.nixl_capi_destroy_xfer_dlist(remoteList);
    }
  }

  /**
   * Prepares {@code descriptors} for transfers by index: of local memory when {@code remoteAgent}
   * is empty, else of that loaded peer's memory.
   *
   * @param uncovered makes the exception thrown when NIXL answers {@link
   *     NixlStatus#ERROR_NOT_FOUND} (given that status): a piece lies outside registered memory, or
   *     the peer is unknown
   */
  public NixlPreparedList prepareList(
      String remoteAgent,
      int memoryType,
      List<Descriptor> descriptors,
      IntFunction<? extends RuntimeException> uncovered) {
    requireOpen();
    XferDlistHandle list = transferList(memoryType, descriptors);
    try {
      PreparedDlistHandle prepared = new PreparedDlistHandle();
      int status = NixlCapi.nixl_capi_prep_xfer_dlist(handle, remoteAgent, list, prepared, null);
      if (status == NixlStatus.ERROR_NOT_FOUND) {
        throw uncovered.apply(status);
      }
      if (status < 0) {
        throw new NixlException(
            "nixl_capi_prep_xfer_dlist",
            status,
            "preparing "
                + descriptors.size()
                + " descriptors of "
                + (remoteAgent.isEmpty() ? "local memory" : "the memory of " + remoteAgent));
      }
      NixlPreparedList out = new NixlPreparedList(this, prepared, remoteAgent, descriptors.size());
      preparedLists.add(out);
      return out;
    } finally {
      NixlCapi.nixl_capi_destroy_xfer_dlist(list);
    }
  }

  /**
   * Prepares (does not post) a transfer between the pieces {@code localIndices} of {@code local}
   * and {@code remoteIndices} of {@code remote}, paired position by position.
   *
   * @param op {@link NixlCapi#XFER_OP_READ} or {@link NixlCapi#XFER_OP_WRITE}
   * @param notification sent to the remote agent once the transfer completes
   */
  public NixlTransfer makeTransfer(
      int op,
      NixlPreparedList local,
      int[] localIndices,
      NixlPreparedList remote,
      int[] remoteIndices,
      Optional<byte[]> notification) {
    requireOpen();
    OptArgsHandle args = notification.isPresent() ? notificationArgs(notification.get()) : null;
    try {
      XferReqHandle req = new XferReqHandle();
      int made =
          NixlCapi.nixl_capi_make_xfer_req(
              handle,
              op,
              local.handle(),
              localIndices,
              localIndices.length,
              remote.handle(),
              remoteIndices,
              remoteIndices.length,
              req,
              args);
      if (made < 0) {
        throw new NixlException(
            "nixl_capi_make_xfer_req",
            made,
            (op == NixlCapi.XFER_OP_READ ? "preparing a READ from " : "preparing a WRITE to ")
                + remote.remoteAgent()
                + " of "
                + localIndices.length
                + " prepared descriptors");
      }
      NixlTransfer transfer = new NixlTransfer(this, req, remote.remoteAgent());
      transfers.add(transfer);
      return transfer;
    } finally {
      if (args != null) {
        NixlCapi.nixl_capi_destroy_opt_args(args);
      }
    }
  }

  /** Sends a notification to a loaded peer. */
  public void sendNotification(String remoteAgent, byte[] message) {
    requireOpen();
    check(
        NixlCapi.nixl_capi_gen_notif(handle, remoteAgent, message, message.length, null),
        "nixl_capi_gen_notif",
        "notifying agent " + remoteAgent + " (" + message.length + " bytes)");
  }

  /** Returns and forgets the notifications received so far, in arrival order per sender. */
  public List<Notification> takeNotifications() {
    requireOpen();
    check(NixlCapi.nixl_capi_notif_map_clear(notifications), "nixl_capi_notif_map_clear", name);
    check(
        NixlCapi.nixl_capi_get_notifs(handle, notifications, null),
        "nixl_capi_get_notifs",
        "fetching notifications of agent " + name);
    try (SizeTPointer size = new SizeTPointer(1);
        SizeTPointer len = new SizeTPointer(1);
        PointerPointer<Pointer> ptr = new PointerPointer<>(1)) {
      check(NixlCapi.nixl_capi_notif_map_size(notifications, size), "nixl_capi_notif_map_size", "");
      long senders = size.get();
      if (senders == 0) {
        return List.of();
      }
      List<Notification> out = new ArrayList<>();
      for (long i = 0; i < senders; i++) {
        check(
            NixlCapi.nixl_capi_notif_map_get_agent_at(notifications, i, ptr),
            "nixl_capi_notif_map_get_agent_at",
            "reading notifications of agent " + name);
        String sender = new BytePointer(ptr.get(0)).getString();
        check(
            NixlCapi.nixl_capi_notif_map_get_notifs_size(notifications, sender, size),
            "nixl_capi_notif_map_get_notifs_size",
            "reading notifications from " + sender);
        long count = size.get();
        for (long j = 0; j < count; j++) {
          check(
              NixlCapi.nixl_capi_notif_map_get_notif(notifications, sender, j, ptr, len),
              "nixl_capi_notif_map_get_notif",
              "reading notification " + j + " from " + sender);
          out.add(new Notification(sender, copy(ptr.get(0), len.get())));
        }
      }
      return out;
    }
  }

  /** Releases open transfers, then destroys the agent with its backends and registrations. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    try {
      for (NixlTransfer transfer : List.copyOf(transfers)) {
        transfer.close();
      }
      for (NixlPreparedList list : List.copyOf(preparedLists)) {
        list.close();
      }
    } finally {
      closed = true;
    }
    NixlCapi.nixl_capi_destroy_notif_map(notifications);
    check(NixlCapi.nixl_capi_destroy_agent(handle), "nixl_capi_destroy_agent", "closing " + name);
  }

  AgentHandle handle() {
    requireOpen();
    return handle;
  }

  boolean isClosed() {
    return closed;
  }

  void forget(NixlTransfer transfer) {
    transfers.remove(transfer);
  }

  void forget(NixlPreparedList list) {
    preparedLists.remove(list);
  }

  private void registration(int memoryType, Descriptor region, boolean register) {
    requireOpen();
    RegDlistHandle list = new RegDlistHandle();
    check(NixlCapi.nixl_capi_create_reg_dlist(memoryType, list), "nixl_capi_create_reg_dlist", "");
    try {
      check(
          NixlCapi.nixl_capi_reg_dlist_add_desc(
              list, region.address(), region.length(), region.deviceId(), null, 0),
          "nixl_capi_reg_dlist_add_desc",
          "describing " + region);
      String what =
          (register ? "registering " : "deregistering ")
              + region
              + " as memory type "
              + memoryType
              + " with agent "
              + name;
      if (register) {
        check(NixlCapi.nixl_capi_register_mem(handle, list, null), "nixl_capi_register_mem", what);
      } else {
        check(
            NixlCapi.nixl_capi_deregister_mem(handle, list, null),
            "nixl_capi_deregister_mem",
            what);
      }
    } finally {
      NixlCapi.nixl_capi_destroy_reg_dlist(list);
    }
  }

  /** Optional arguments that attach {@code message} to a transfer; the caller destroys them. */
  private static OptArgsHandle notificationArgs(byte[] message) {
    OptArgsHandle args = new OptArgsHandle();
    check(NixlCapi.nixl_capi_create_opt_args(args), "nixl_capi_create_opt_args", "");
    try {
      check(
          NixlCapi.nixl_capi_opt_args_set_notif_msg(args, message, message.length),
          "nixl_capi_opt_args_set_notif_msg",
          "attaching a notification of " + message.length + " bytes");
      check(
          NixlCapi.nixl_capi_opt_args_set_has_notif(args, true),
          "nixl_capi_opt_args_set_has_notif",
          "attaching a notification");
      return args;
    } catch (RuntimeException e) {
      NixlCapi.nixl_capi_destroy_opt_args(args);
      throw e;
    }
  }

  private static XferDlistHandle transferList(int memoryType, List<Descriptor> descriptors) {
    XferDlistHandle list = new XferDlistHandle();
    check(
        NixlCapi.nixl_capi_create_xfer_dlist(memoryType, list), "nixl_capi_create_xfer_dlist", "");
    try {
      for (int i = 0, n = descriptors.size(); i < n; i++) {
        Descriptor d = descriptors.get(i);
        int status =
            NixlCapi.nixl_capi_xfer_dlist_add_desc(list, d.address(), d.length(), d.deviceId());
        if (status < 0) {
          // The message is built only on failure: this runs for every descriptor of a request.
          throw new NixlException("nixl_capi_xfer_dlist_add_desc", status, "describing " + d);
        }
      }
      return list;
    } catch (RuntimeException e) {
      NixlCapi.nixl_capi_destroy_xfer_dlist(list);
      throw e;
    }
  }

  private static Map<String, String> readParams(ParamsHandle params) {
    Map<String, String> out = new LinkedHashMap<>();
    try (BoolPointer flag = new BoolPointer(1)) {
      check(NixlCapi.nixl_capi_params_is_empty(params, flag), "nixl_capi_params_is_empty", "");
      if (flag.get()) {
        return Map.of();
      }
      ParamIterHandle iter = new ParamIterHandle();
      check(
          NixlCapi.nixl_capi_params_create_iterator(params, iter),
          "nixl_capi_params_create_iterator",
          "");
      try (PointerPointer<Pointer> key = new PointerPointer<>(1);
          PointerPointer<Pointer> value = new PointerPointer<>(1)) {
        do {
          check(
              NixlCapi.nixl_capi_params_iterator_next(iter, key, value, flag),
              "nixl_capi_params_iterator_next",
              "reading parameters");
          out.put(
              new BytePointer(key.get(0)).getString(), new BytePointer(value.get(0)).getString());
        } while (flag.get());
      } finally {
        NixlCapi.nixl_capi_params_destroy_iterator(iter);
      }
    }
    return Collections.unmodifiableMap(out);
  }

  private static byte[] copy(Pointer data, long length) {
    if (length > Integer.MAX_VALUE - 8) {
      throw new IllegalStateException("a NIXL blob of " + length + " bytes does not fit an array");
    }
    byte[] out = new byte[(int) length];
    if (length > 0) {
      new BytePointer(data).get(out);
    }
    return out;
  }

  private void requireOpen() {
    if (closed) {
      throw new IllegalStateException("NIXL agent " + name + " is closed");
    }
  }

  static void check(int status, String call, String what) {
    if (status < 0) {
      throw new NixlException(call, status, what);
    }
  }
}
