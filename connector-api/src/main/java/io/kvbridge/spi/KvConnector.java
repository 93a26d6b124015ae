package io.kvbridge.spi;

/**
 * One engine's connector: a {@link SchedulerSide} and a {@link WorkerSide} that share a lease table
 * and a transport. Created by {@code io.kvbridge.runtime.ConnectorRegistry} around a {@link
 * TransportProvider}'s transport; closed by whoever created it.
 *
 * <p>Threads: as documented on each side; {@link #status()} may be called from any thread.
 */
public interface KvConnector extends AutoCloseable {

  /** The settings this connector was created with. */
  ConnectorSettings settings();

  /** The deciding half. */
  SchedulerSide scheduler();

  /** The byte-moving half of rank 0, the lead rank: the only one of an engine without TP. */
  default WorkerSide worker() {
    return worker(0);
  }

  /**
   * The byte-moving half of tensor-parallel rank {@code rank} (0 to {@code settings().tpDegree() -
   * 1}): its own KV memory and transport agent. The engine registers every rank's KV cache before
   * the connector serves; the lead rank drives the protocol for all of them, so an engine may call
   * {@code startLoad} and {@code getFinished} on any rank, and each outcome is reported once, by
   * the first {@code getFinished} after it happened.
   */
  WorkerSide worker(int rank);

  /**
   * Called when peer engine {@code engineId} is known to be gone, e.g. its registration in a
   * discovery service expired because its process or host died. As a consumer: every load still
   * waiting on that producer fails at once with {@code why}, and the producer is forgotten until it
   * is seen again. As a producer: every lease that only that consumer was renewing is revoked, so
   * its blocks come back before the lease would expire. Idempotent; may be called from any thread.
   */
  void peerGone(String engineId, String why);

  /**
   * Tells {@code listener} of this connector's lifecycle from now on (what already happened is not
   * told again). Closing the returned handle stops it; any thread may call either.
   */
  AutoCloseable listen(ConnectorListener listener);

  /** A snapshot for health checks and management. */
  ConnectorStatus status();

  /**
   * Revokes every live lease, fails every load in flight, stops answering handshakes and closes the
   * transport. The engine frees the revoked requests' blocks itself.
   */
  @Override
  void close();
}
