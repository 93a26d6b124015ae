package io.kvbridge.nixl.capi;

import io.kvbridge.nixl.capi.NixlCapi.PreparedDlistHandle;

/**
 * A prepared transfer descriptor list of one {@link NixlAgent}: local memory, or one loaded peer's
 * memory as its metadata described it. Transfers are made from it by index ({@link
 * NixlAgent#makeTransfer}); closing it releases it in NIXL and frees its handle. Transfers made
 * from it copy what they need and may outlive it.
 *
 * <p>Threads: confined like its agent.
 */
public final class NixlPreparedList implements AutoCloseable {

  private final NixlAgent agent;
  private final PreparedDlistHandle handle;
  private final String remoteAgent;
  private final int size;
  private boolean closed;

  NixlPreparedList(NixlAgent agent, PreparedDlistHandle handle, String remoteAgent, int size) {
    this.agent = agent;
    this.handle = handle;
    this.remoteAgent = remoteAgent;
    this.size = size;
  }

  /** The peer whose memory the list describes; empty for local memory. */
  public String remoteAgent() {
    return remoteAgent;
  }

  /** The number of descriptors. */
  public int size() {
    return size;
  }

  /** Whether it was released. */
  public boolean isClosed() {
    return closed;
  }

  PreparedDlistHandle handle() {
    if (closed) {
      throw new IllegalStateException(
          "prepared list of "
              + (remoteAgent.isEmpty() ? "local memory" : remoteAgent)
              + " was released");
    }
    return handle;
  }

  /** Releases the list in NIXL, which frees its handle; later calls do nothing. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    agent.forget(this);
    if (agent.isClosed()) {
      return;
    }
    int released = NixlCapi.nixl_capi_release_xfer_dlist_handle(agent.handle(), handle);
    if (released < 0) {
      throw new NixlException(
          "nixl_capi_release_xfer_dlist_handle",
          released,
          "releasing a prepared list of "
              + (remoteAgent.isEmpty() ? "local memory" : "the memory of " + remoteAgent));
    }
  }
}
