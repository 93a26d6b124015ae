package io.kvbridge.spi;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.transfer.KvMemory;
import java.util.List;
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
   * Called once at start-up, before {@link #registerKvCache}: allocates the regions of {@code
   * layout} ({@link KvLayout#regions()} of {@link KvLayout#regionBytes()} each: one, one per layer,
   * or one per layer and plane, as its placement says) of the kind the transport moves best (device
   * memory where configured and usable). The engine owns the result and closes every region after
   * the connector is closed.
   */
  List<KvMemory> allocateKvRegions(KvLayout layout);

  /**
   * {@link #allocateKvRegions} for a layout of one region (a cross-layer layout).
   *
   * @throws IllegalArgumentException if {@code layout} has more than one region
   */
  default KvMemory allocateKvCache(KvLayout layout) {
    requireOneRegion(layout);
    return allocateKvRegions(layout).get(0);
  }

  /**
   * Called once at start-up with the engine's KV cache: the regions {@code layout} places its slabs
   * in, in region order. The connector registers each with the transport and starts answering
   * handshakes. The engine keeps ownership of the memory and closes it after the connector is
   * closed.
   *
   * @throws IllegalArgumentException naming the region, if the regions do not fit the layout
   */
  void registerKvCache(List<KvMemory> regions, KvLayout layout);

  /**
   * {@link #registerKvCache(List, KvLayout)} for a layout of one region (a cross-layer layout).
   *
   * @throws IllegalArgumentException if {@code layout} has more than one region
   */
  default void registerKvCache(KvMemory memory, KvLayout layout) {
    requireOneRegion(layout);
    registerKvCache(List.of(memory), layout);
  }

  private static void requireOneRegion(KvLayout layout) {
    if (layout.regions() != 1) {
      throw new IllegalArgumentException(
          "a layout placed "
              + layout.placement()
              + " is "
              + layout.regions()
              + " regions: allocate and register them as a list");
    }
  }

  /**
   * Called by a producer's worker on each rank as the forward pass writes a layer of a request's KV
   * into that rank's memory, in layer order, 0 first: {@code layer} of {@code requestId} is
   * complete and will not change. Once every rank saved a layer, the consumer reading the request's
   * streamed lease ({@link SchedulerSide#requestStarted}) is told, with the layer's checksums, and
   * reads it. Ignored for a request whose lease is not streamed, so an engine may call it for every
   * request.
   *
   * @throws IllegalArgumentException if {@code layer} is not this rank's next layer of the request
   */
  void layerSaved(String requestId, int layer);

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
