package io.kvbridge.nixl.capi;

import io.kvbridge.nixl.capi.NixlCapi.XferReqHandle;
import io.kvbridge.nixl.capi.NixlCapi.XferTelemetry;
import java.util.Optional;

/**
 * A prepared NIXL transfer request of one {@link NixlAgent}. Closing it releases the request in
 * NIXL (cancelling it if still running) and then frees its handle, in that order.
 *
 * <p>Threads: confined like its agent.
 */
public final class NixlTransfer implements AutoCloseable {

  private final NixlAgent agent;
  private final XferReqHandle request;
  private final String remoteAgent;
  private boolean closed;

  NixlTransfer(NixlAgent agent, XferReqHandle request, String remoteAgent) {
    this.agent = agent;
    this.request = request;
    this.remoteAgent = remoteAgent;
  }

  /**
   * What NIXL measured for a finished transfer.
   *
   * @param postMicros how long the post took
   * @param transferMicros how long the transfer took
   * @param bytes bytes moved
   * @param descriptors descriptors moved
   */
  public record Telemetry(long postMicros, long transferMicros, long bytes, long descriptors) {}

  /**
   * Starts (or restarts) the transfer.
   *
   * @return {@link NixlStatus#SUCCESS} if already complete, {@link NixlStatus#IN_PROG} otherwise
   * @throws NixlException if NIXL refuses it
   */
  public int post() {
    requireOpen();
    int status = NixlCapi.nixl_capi_post_xfer_req(agent.handle(), request, null);
    if (status < 0) {
      throw new NixlException(
          "nixl_capi_post_xfer_req", status, "posting a transfer with " + remoteAgent);
    }
    return status;
  }

  /** The raw state: {@link NixlStatus#SUCCESS}, {@link NixlStatus#IN_PROG} or a failure code. */
  public int status() {
    requireOpen();
    return NixlCapi.nixl_capi_get_xfer_status(agent.handle(), request);
  }

  /** NIXL's telemetry of the transfer, if the agent captures it and the transfer finished. */
  public Optional<Telemetry> telemetry() {
    requireOpen();
    if (!agent.capturesTelemetry()) {
      return Optional.empty();
    }
    try (XferTelemetry t = new XferTelemetry()) {
      int status = NixlCapi.nixl_capi_get_xfer_telemetry(agent.handle(), request, t);
      if (status != NixlStatus.SUCCESS) {
        return Optional.empty();
      }
      return Optional.of(
          new Telemetry(
              t.post_duration_us(), t.xfer_duration_us(), t.total_bytes(), t.desc_count()));
    }
  }

  /** Releases the request in NIXL, then frees its handle; later calls do nothing. */
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
    int released = NixlCapi.nixl_capi_release_xfer_req(agent.handle(), request);
    int destroyed = NixlCapi.nixl_capi_destroy_xfer_req(request);
    if (released < 0) {
      throw new NixlException(
          "nixl_capi_release_xfer_req", released, "releasing a transfer with " + remoteAgent);
    }
    if (destroyed < 0) {
      throw new NixlException(
          "nixl_capi_destroy_xfer_req", destroyed, "freeing a transfer with " + remoteAgent);
    }
  }

  private void requireOpen() {
    if (closed) {
      throw new IllegalStateException("transfer with " + remoteAgent + " was released");
    }
  }
}
