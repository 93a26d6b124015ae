package io.kvbridge.nixl.capi;

import org.bytedeco.javacpp.BoolPointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;
import org.bytedeco.javacpp.SizeTPointer;
import org.bytedeco.javacpp.annotation.ByPtrPtr;
import org.bytedeco.javacpp.annotation.Cast;
import org.bytedeco.javacpp.annotation.Const;
import org.bytedeco.javacpp.annotation.MemberGetter;
import org.bytedeco.javacpp.annotation.MemberSetter;
import org.bytedeco.javacpp.annotation.Name;
import org.bytedeco.javacpp.annotation.Opaque;
import org.bytedeco.javacpp.annotation.Platform;

/**
 * The raw binding of NIXL's C API ({@code libnixl_capi.so}): one native method per C function,
 * named as in C, declared in {@code src/main/native/kvbridge_nixl_capi.h}. Every function returns a
 * status (see {@link NixlStatus}); results come back through out-parameters.
 *
 * <p>Nothing here checks statuses or frees anything: {@link NixlAgent} does. The natives are linked
 * only after {@link NixlLibrary#require()} succeeded; calling one before throws {@link
 * UnsatisfiedLinkError}.
 *
 * <p>Threads: as NIXL's C API. An agent created without thread synchronisation must not be called
 * from two threads at once; its callers serialise.
 */
@Platform(
    value = "linux-x86_64",
    include = {"<stdlib.h>", "kvbridge_nixl_capi.h"},
    link = "nixl_capi")
public final class NixlCapi {

  /** {@code nixl_capi_mem_type_t}: host memory. */
  public static final int MEM_DRAM = 0;

  /** {@code nixl_capi_mem_type_t}: GPU device memory. */
  public static final int MEM_VRAM = 1;

  /** {@code nixl_capi_xfer_op_t}: copy from the remote agent into local memory. */
  public static final int XFER_OP_READ = 0;

  /** {@code nixl_capi_xfer_op_t}: copy from local memory into the remote agent. */
  public static final int XFER_OP_WRITE = 1;

  /** {@code nixl_capi_thread_sync_t}: the caller serialises calls on an agent. */
  public static final int THREAD_SYNC_NONE = 0;

  private NixlCapi() {}

  /** {@code nixl_capi_agent_t}. */
  @Opaque
  @Name("nixl_capi_agent_s")
  public static final class AgentHandle extends Pointer {
    /** A null handle, to be filled by a create function. */
    public AgentHandle() {
      super((Pointer) null);
    }
  }

  /** {@code nixl_capi_backend_t}. */
  @Opaque
  @Name("nixl_capi_backend_s")
  public static final class BackendHandle extends Pointer {
    /** A null handle, to be filled by a create function. */
    public BackendHandle() {
      super((Pointer) null);
    }
  }

  /** {@code nixl_capi_params_t}. */
  @Opaque
  @Name("nixl_capi_params_s")
  public static final class ParamsHandle extends Pointer {
    /** A null handle, to be filled by a create function. */
    public ParamsHandle() {
      super((Pointer) null);
    }
  }

  /** {@code nixl_capi_param_iter_t}. */
  @Opaque
  @Name("nixl_capi_param_iter_s")
  public static final class ParamIterHandle extends Pointer {
    /** A null handle, to be filled by a create function. */
    public ParamIterHandle() {
      super((Pointer) null);
    }
  }

  /** {@code nixl_capi_mem_list_t}. */
  @Opaque
  @Name("nixl_capi_mem_list_s")
  public static final class MemListHandle extends Pointer {
    /** A null handle, to be filled by a create function. */
    public MemListHandle() {
      super((Pointer) null);
    }
  }

  /** {@code nixl_capi_string_list_t}. */
  @Opaque
  @Name("nixl_capi_string_list_s")
  public static final class StringListHandle extends Pointer {
    /** A null handle, to be filled by a create function. */
    public StringListHandle() {
      super((Pointer) null);
    }
  }

  /** {@code nixl_capi_opt_args_t}. */
  @Opaque
  @Name("nixl_capi_opt_args_s")
  public static final class OptArgsHandle extends Pointer {
    /** A null handle, to be filled by a create function. */
    public OptArgsHandle() {
      super((Pointer) null);
    }
  }

  /** {@code nixl_capi_reg_dlist_t}. */
  @Opaque
  @Name("nixl_capi_reg_dlist_s")
  public static final class RegDlistHandle extends Pointer {
    /** A null handle, to be filled by a create function. */
    public RegDlistHandle() {
      super((Pointer) null);
    }
  }

  /** {@code nixl_capi_xfer_dlist_t}. */
  @Opaque
  @Name("nixl_capi_xfer_dlist_s")
  public static final class XferDlistHandle extends Pointer {
    /** A null handle, to be filled by a create function. */
    public XferDlistHandle() {
      super((Pointer) null);
    }
  }

  /** {@code nixl_capi_xfer_dlist_handle_t}: a prepared transfer descriptor list. */
  @Opaque
  @Name("nixl_capi_xfer_dlist_handle_s")
  public static final class PreparedDlistHandle extends Pointer {
    /** A null handle, to be filled by {@code nixl_capi_prep_xfer_dlist}. */
    public PreparedDlistHandle() {
      super((Pointer) null);
    }
  }

  /** {@code nixl_capi_xfer_req_t}. */
  @Opaque
  @Name("nixl_capi_xfer_req_s")
  public static final class XferReqHandle extends Pointer {
    /** A null handle, to be filled by a create function. */
    public XferReqHandle() {
      super((Pointer) null);
    }
  }

  /** {@code nixl_capi_notif_map_t}. */
  @Opaque
  @Name("nixl_capi_notif_map_s")
  public static final class NotifMapHandle extends Pointer {
    /** A null handle, to be filled by a create function. */
    public NotifMapHandle() {
      super((Pointer) null);
    }
  }

  /** {@code nixl_capi_agent_config_t}, allocated (zeroed) and freed by JavaCPP. */
  @Name("nixl_capi_agent_config_t")
  public static final class AgentConfig extends Pointer {
    /** Allocates a zeroed configuration. */
    public AgentConfig() {
      super((Pointer) null);
      allocate();
    }

    private native void allocate();

    /** Whether the agent runs a progress thread. */
    @MemberGetter
    public native @Cast("bool") boolean enable_prog_thread();

    /** Sets whether the agent runs a progress thread. */
    @MemberSetter
    public native AgentConfig enable_prog_thread(@Cast("bool") boolean value);

    /** Whether the agent runs a metadata listener thread. */
    @MemberGetter
    public native @Cast("bool") boolean enable_listen_thread();

    /** Sets whether the agent runs a metadata listener thread. */
    @MemberSetter
    public native AgentConfig enable_listen_thread(@Cast("bool") boolean value);

    /** The listener's port. */
    @MemberGetter
    public native int listen_port();

    /** Sets the listener's port. */
    @MemberSetter
    public native AgentConfig listen_port(int value);

    /** The thread synchronisation mode. */
    @MemberGetter
    public native @Cast("int") int thread_sync();

    /** Sets the thread synchronisation mode. */
    @MemberSetter
    public native AgentConfig thread_sync(@Cast("nixl_capi_thread_sync_t") int value);

    /** Worker count (not used by NIXL 1.5.1). */
    @MemberGetter
    public native @Cast("unsigned int") int num_workers();

    /** Sets the worker count. */
    @MemberSetter
    public native AgentConfig num_workers(@Cast("unsigned int") int value);

    /** Microseconds the progress thread sleeps between polls. */
    @MemberGetter
    public native @Cast("uint64_t") long pthr_delay_us();

    /** Sets the microseconds the progress thread sleeps between polls. */
    @MemberSetter
    public native AgentConfig pthr_delay_us(@Cast("uint64_t") long value);

    /** Microseconds the listener thread sleeps between polls. */
    @MemberGetter
    public native @Cast("uint64_t") long lthr_delay_us();

    /** Sets the microseconds the listener thread sleeps between polls. */
    @MemberSetter
    public native AgentConfig lthr_delay_us(@Cast("uint64_t") long value);

    /** Whether transfers record telemetry. */
    @MemberGetter
    public native @Cast("bool") boolean capture_telemetry();

    /** Sets whether transfers record telemetry. */
    @MemberSetter
    public native AgentConfig capture_telemetry(@Cast("bool") boolean value);
  }

  /** {@code struct nixl_capi_xfer_telemetry_s}, allocated and freed by JavaCPP. */
  @Name("nixl_capi_xfer_telemetry_s")
  public static final class XferTelemetry extends Pointer {
    /** Allocates an empty record. */
    public XferTelemetry() {
      super((Pointer) null);
      allocate();
    }

    private native void allocate();

    /** Start of the transfer, microseconds on NIXL's steady clock. */
    @MemberGetter
    public native @Cast("uint64_t") long start_time_us();

    /** Microseconds the post took. */
    @MemberGetter
    public native @Cast("uint64_t") long post_duration_us();

    /** Microseconds the transfer took. */
    @MemberGetter
    public native @Cast("uint64_t") long xfer_duration_us();

    /** Bytes moved. */
    @MemberGetter
    public native @Cast("uint64_t") long total_bytes();

    /** Descriptors moved. */
    @MemberGetter
    public native @Cast("uint64_t") long desc_count();
  }

  // ---- the C library

  /** Sets a process environment variable (libc {@code setenv}); NIXL reads some at start. */
  public static native int setenv(String name, String value, int overwrite);

  /** Whether the loaded library is NIXL's stub build, which does nothing. */
  public static native @Cast("bool") boolean nixl_capi_is_stub();

  // ---- agents

  /** Creates an agent named {@code name} with {@code cfg}. */
  public static native int nixl_capi_create_configured_agent(
      String name, @Const AgentConfig cfg, @ByPtrPtr AgentHandle agent);

  /** Destroys an agent, its backends and its registrations. */
  public static native int nixl_capi_destroy_agent(AgentHandle agent);

  // ---- plugins and backends

  /** Lists the plugins found in the plugin directory; free with destroy_string_list. */
  public static native int nixl_capi_get_available_plugins(
      AgentHandle agent, @ByPtrPtr StringListHandle plugins);

  /** A plugin's memory types and default parameters; free both. */
  public static native int nixl_capi_get_plugin_params(
      AgentHandle agent,
      String pluginName,
      @ByPtrPtr MemListHandle mems,
      @ByPtrPtr ParamsHandle params);

  /** Creates a backend of {@code pluginName}; the handle is freed, the backend lives on. */
  public static native int nixl_capi_create_backend(
      AgentHandle agent, String pluginName, ParamsHandle params, @ByPtrPtr BackendHandle backend);

  /** Frees a backend handle (not the backend). */
  public static native int nixl_capi_destroy_backend(BackendHandle backend);

  // ---- string lists

  /** Number of strings. */
  public static native int nixl_capi_string_list_size(StringListHandle list, SizeTPointer size);

  /** The string at {@code index}, borrowed from the list. */
  public static native int nixl_capi_string_list_get(
      StringListHandle list,
      @Cast("size_t") long index,
      @Cast("const char**") PointerPointer<?> str);

  /** Frees a string list. */
  public static native int nixl_capi_destroy_string_list(StringListHandle list);

  // ---- memory type lists

  /** Number of memory types. */
  public static native int nixl_capi_mem_list_size(MemListHandle list, SizeTPointer size);

  /** The memory type at {@code index}. */
  public static native int nixl_capi_mem_list_get(
      MemListHandle list, @Cast("size_t") long index, @Cast("nixl_capi_mem_type_t*") int[] memType);

  /** Frees a memory type list. */
  public static native int nixl_capi_destroy_mem_list(MemListHandle list);

  // ---- parameters

  /** Creates an empty parameter map. */
  public static native int nixl_capi_create_params(@ByPtrPtr ParamsHandle params);

  /** Adds a key/value pair. */
  public static native int nixl_capi_params_add(ParamsHandle params, String key, String value);

  /** Whether the map is empty. */
  public static native int nixl_capi_params_is_empty(ParamsHandle params, BoolPointer isEmpty);

  /** Starts iterating a non-empty map. */
  public static native int nixl_capi_params_create_iterator(
      ParamsHandle params, @ByPtrPtr ParamIterHandle iter);

  /** The next pair, valid until the next call on {@code iter}. */
  public static native int nixl_capi_params_iterator_next(
      ParamIterHandle iter,
      @Cast("const char**") PointerPointer<?> key,
      @Cast("const char**") PointerPointer<?> value,
      BoolPointer hasNext);

  /** Frees an iterator. */
  public static native int nixl_capi_params_destroy_iterator(ParamIterHandle iter);

  /** Frees a parameter map. */
  public static native int nixl_capi_destroy_params(ParamsHandle params);

  // ---- optional arguments

  /** Creates empty optional arguments. */
  public static native int nixl_capi_create_opt_args(@ByPtrPtr OptArgsHandle args);

  /** Restricts a call to {@code backend}. */
  public static native int nixl_capi_opt_args_add_backend(
      OptArgsHandle args, BackendHandle backend);

  /** Sets the notification a transfer sends on completion (binary-safe). */
  public static native int nixl_capi_opt_args_set_notif_msg(
      OptArgsHandle args, @Cast("const void*") byte[] data, @Cast("size_t") long len);

  /** Whether the transfer sends its notification. */
  public static native int nixl_capi_opt_args_set_has_notif(
      OptArgsHandle args, @Cast("bool") boolean hasNotif);

  /** Frees optional arguments. */
  public static native int nixl_capi_destroy_opt_args(OptArgsHandle args);

  // ---- memory registration

  /** Creates an empty registration list of {@code memType}. */
  public static native int nixl_capi_create_reg_dlist(
      @Cast("nixl_capi_mem_type_t") int memType, @ByPtrPtr RegDlistHandle dlist);

  /** Adds a region. */
  public static native int nixl_capi_reg_dlist_add_desc(
      RegDlistHandle dlist,
      @Cast("uintptr_t") long addr,
      @Cast("size_t") long len,
      @Cast("uint64_t") long devId,
      @Cast("const void*") Pointer metadata,
      @Cast("size_t") long metadataLen);

  /** Frees a registration list. */
  public static native int nixl_capi_destroy_reg_dlist(RegDlistHandle dlist);

  /** Registers the listed regions with every backend (or those in {@code optArgs}). */
  public static native int nixl_capi_register_mem(
      AgentHandle agent, RegDlistHandle dlist, OptArgsHandle optArgs);

  /** Deregisters the listed regions. */
  public static native int nixl_capi_deregister_mem(
      AgentHandle agent, RegDlistHandle dlist, OptArgsHandle optArgs);

  // ---- metadata

  /** This agent's metadata blob, {@code malloc}ed: free with {@link Pointer#free}. */
  public static native int nixl_capi_get_local_md(
      AgentHandle agent, @Cast("void**") PointerPointer<?> data, @Cast("size_t*") SizeTPointer len);

  /** Loads a peer's blob; the returned name is {@code strdup}ed: free with {@link Pointer#free}. */
  public static native int nixl_capi_load_remote_md(
      AgentHandle agent,
      @Cast("const void*") byte[] data,
      @Cast("size_t") long len,
      @Cast("char**") PointerPointer<?> agentName);

  /** Forgets a peer. */
  public static native int nixl_capi_invalidate_remote_md(AgentHandle agent, String remoteAgent);

  /** Whether a peer is loaded and, if {@code descs} is not null, covers {@code descs}. */
  public static native int nixl_capi_check_remote_md(
      AgentHandle agent, String remoteName, XferDlistHandle descs);

  // ---- transfer descriptor lists

  /** Creates an empty transfer list of {@code memType}. */
  public static native int nixl_capi_create_xfer_dlist(
      @Cast("nixl_capi_mem_type_t") int memType, @ByPtrPtr XferDlistHandle dlist);

  /** Adds a piece. */
  public static native int nixl_capi_xfer_dlist_add_desc(
      XferDlistHandle dlist,
      @Cast("uintptr_t") long addr,
      @Cast("size_t") long len,
      @Cast("uint64_t") long devId);

  /** Frees a transfer list. */
  public static native int nixl_capi_destroy_xfer_dlist(XferDlistHandle dlist);

  // ---- prepared transfer descriptor lists

  /**
   * Prepares {@code descs} for requests by index: of local memory when {@code agentName} is empty,
   * else of that loaded peer's memory. Not-found status if a piece lies outside registered memory.
   */
  public static native int nixl_capi_prep_xfer_dlist(
      AgentHandle agent,
      String agentName,
      XferDlistHandle descs,
      @ByPtrPtr PreparedDlistHandle handle,
      OptArgsHandle optArgs);

  /** Releases a prepared list and frees its handle. */
  public static native int nixl_capi_release_xfer_dlist_handle(
      AgentHandle agent, PreparedDlistHandle handle);

  /** Prepares a transfer between the pieces at the given indices of two prepared lists. */
  public static native int nixl_capi_make_xfer_req(
      AgentHandle agent,
      @Cast("nixl_capi_xfer_op_t") int operation,
      PreparedDlistHandle localDescs,
      @Const int[] localIndices,
      @Cast("size_t") long localCount,
      PreparedDlistHandle remoteDescs,
      @Const int[] remoteIndices,
      @Cast("size_t") long remoteCount,
      @ByPtrPtr XferReqHandle req,
      OptArgsHandle optArgs);

  // ---- transfers

  /** Prepares a transfer; the lists are copied and may be freed afterwards. */
  public static native int nixl_capi_create_xfer_req(
      AgentHandle agent,
      @Cast("nixl_capi_xfer_op_t") int operation,
      XferDlistHandle localDescs,
      XferDlistHandle remoteDescs,
      String remoteAgent,
      @ByPtrPtr XferReqHandle req,
      OptArgsHandle optArgs);

  /** Starts a transfer: 0 done, 1 in progress, negative failed. */
  public static native int nixl_capi_post_xfer_req(
      AgentHandle agent, XferReqHandle req, OptArgsHandle optArgs);

  /** A posted transfer's state: 0 done, 1 in progress, negative failed. */
  public static native int nixl_capi_get_xfer_status(AgentHandle agent, XferReqHandle req);

  /** Fills {@code telemetry} if the agent captures it. */
  public static native int nixl_capi_get_xfer_telemetry(
      AgentHandle agent,
      XferReqHandle req,
      @Cast("nixl_capi_xfer_telemetry_t") XferTelemetry telemetry);

  /** Releases a transfer (cancelling it if still running); then destroy the handle. */
  public static native int nixl_capi_release_xfer_req(AgentHandle agent, XferReqHandle req);

  /** Frees a released transfer's handle. */
  public static native int nixl_capi_destroy_xfer_req(XferReqHandle req);

  // ---- notifications

  /** Sends a notification to a loaded peer (binary-safe). */
  public static native int nixl_capi_gen_notif(
      AgentHandle agent,
      String remoteAgent,
      @Cast("const void*") byte[] data,
      @Cast("size_t") long len,
      OptArgsHandle optArgs);

  /** Creates an empty notification map. */
  public static native int nixl_capi_create_notif_map(@ByPtrPtr NotifMapHandle map);

  /** Appends the notifications received since the last call to {@code map}. */
  public static native int nixl_capi_get_notifs(
      AgentHandle agent, NotifMapHandle map, OptArgsHandle optArgs);

  /** Number of senders in the map. */
  public static native int nixl_capi_notif_map_size(NotifMapHandle map, SizeTPointer size);

  /** The sender at {@code index}, borrowed from the map. */
  public static native int nixl_capi_notif_map_get_agent_at(
      NotifMapHandle map,
      @Cast("size_t") long index,
      @Cast("const char**") PointerPointer<?> agentName);

  /** Number of notifications from {@code agentName}. */
  public static native int nixl_capi_notif_map_get_notifs_size(
      NotifMapHandle map, String agentName, SizeTPointer size);

  /** A notification's bytes, borrowed from the map and not NUL-terminated. */
  public static native int nixl_capi_notif_map_get_notif(
      NotifMapHandle map,
      String agentName,
      @Cast("size_t") long index,
      @Cast("const void**") PointerPointer<?> data,
      @Cast("size_t*") SizeTPointer len);

  /** Empties the map. */
  public static native int nixl_capi_notif_map_clear(NotifMapHandle map);

  /** Frees a notification map. */
  public static native int nixl_capi_destroy_notif_map(NotifMapHandle map);
}
