package io.kvbridge.spi;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.transfer.KvMemory;
import java.util.Set;

/**
 * The byte-moving half of a connector: one per device, owns the KV memory registration, drives the
 * transport and reports what finished.
 *
 * <p>Threads: {@link #registerKvCache}, {@link #startLoad} and {@link #getFinished} are called from
 * the engine's worker thread; {@link #sweep} from a scheduled task (the starter's) as well.
 * Implementations synchronize internally.
 */
public interface WorkerSide {

  /**
   * Called once at start-up, before {@link #registerKvCache}: allocates memory for {@code layout}
   * of the kind the transport moves best (device memory where configured and usable). The engine
   * owns the result and closes it after the connector is closed.
   */
  KvMemory allocateKvCache(KvLayout layout);

  /**
   * Called once at start-up with the engine's KV cache: the connector registers it with the
   * transport and starts answering handshakes. The engine keeps ownership of the memory and closes
   * it after the connector is closed.
   */
  void registerKvCache(KvMemory memory, KvLayout layout);

  /**
   * Called by a consumer's worker each step with the scheduler's metadata: handshakes with new
   * producers, checks each lease against the safety margin and posts the reads. Loads that cannot
   * start are reported as failures by the next {@link #getFinished}.
   */
  void startLoad(StepMetadata metadata);

  /**
   * Called by the worker each step. Progresses transfers, handles incoming protocol messages,
   * sweeps expired leases, sends due heartbeats, and reports what finished since the last call.
   * Ownership of the reported blocks returns to the engine.
   *
   * @param finishedRequestIds requests the engine finished this step (informational)
   */
  FinishedTransfers getFinished(Set<String> finishedRequestIds);

  /**
   * Handles incoming messages, ends expired leases, times out loads whose peer does not answer, and
   * sends the heartbeats that are due (every {@link ConnectorSettings#heartbeatInterval()},
   * renewing on each producer the leases this consumer still means to read), without reporting:
   * what ended is reported by the next {@link #getFinished}, which does the same work. Call it on a
   * schedule (the starter does, every {@code kvbridge.lease.sweep-interval}) so an idle engine
   * still frees expired leases and keeps its loads' leases alive.
   */
  void sweep();
}
