package io.kvbridge.runtime.consumer;

import io.kvbridge.runtime.engine.ConnectorCounters;
import io.kvbridge.runtime.engine.Ranks;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.TransferTelemetry;
import io.kvbridge.transfer.TransportException;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.Optional;

/**
 * The READs of loads on this engine's ranks: plans a load's read, posts it one rank pair at a time
 * (through {@link PreparedReads}), tells how it is going, hands the observer what the transport
 * measured, and releases it. The load's transitions stay with {@link Consumer}.
 *
 * <p>Threads: confined to the connector's lock.
 */
final class LoadReads {

  // Under the consumer's name, where a load's reads have always been logged.
  private static final System.Logger LOG = System.getLogger(Consumer.class.getName());

  private final Ranks ranks;
  private final ConnectorCounters counters;
  private final long minStageBytes;
  private final PreparedReads prepared;

  LoadReads(Ranks ranks, ConnectorCounters counters, long minStageBytes) {
    this.ranks = ranks;
    this.counters = counters;
    this.minStageBytes = minStageBytes;
    this.prepared = new PreparedReads(ranks);
  }

  /** What the read of {@code load}, lent its blocks, maps from its producer to this engine. */
  TransferPlanner.Request plan(Load load) {
    return new TransferPlanner.Request(
        load.peer().layouts(),
        ranks.layouts(),
        load.params().blockIds(),
        load.localBlocks(),
        load.params().tokens(),
        load.effectiveSkip());
  }

  /**
   * Posts the READs of {@code plan} for {@code load} in the stages {@link ReadPlan#stageBounds}
   * gives (of at least the stage bytes this was made with), each its own READs, so that the blocks
   * of a stage are checked while later stages still move: what was posted.
   *
   * @throws TransportException if a transport refuses a READ; those posted before it are released
   * @throws IllegalArgumentException if the plan does not fit the ranks; likewise
   */
  Load.Posting post(Load load, TransferPlanner.Request plan) {
    Load.Posting posting = new Load.Posting();
    int first = plan.firstBlock();
    int blocks = plan.producerBlocks().size() - first;
    int[] bounds = ReadPlan.stageBounds(plan.producer(), first, blocks, minStageBytes);
    try {
      for (int s = 0; s + 1 < bounds.length; s++) {
        posting.beginStage(bounds[s], bounds[s + 1]);
        TransferPlanner.plan(plan, bounds[s], bounds[s + 1])
            .forEach((pair, pieces) -> prepared.post(load.peer(), pair, pieces, posting));
      }
    } catch (TransportException | IllegalArgumentException e) {
      release(load.requestId(), posting.reads());
      throw e;
    }
    return posting;
  }

  /**
   * How the read of {@code load} is going: failed as soon as one READ failed (or its status cannot
   * be read), done once every READ is, in progress otherwise.
   */
  TransferStatus status(Load load) {
    return status(load.reads());
  }

  /**
   * How {@code reads} are going: failed as soon as one failed, done once every one is, in progress
   * otherwise.
   */
  TransferStatus status(List<Load.Read> reads) {
    TransferStatus status = TransferStatus.DONE;
    for (Load.Read read : reads) {
      TransferStatus one;
      try {
        one = ranks.transport(read.consumerRank()).status(read.handle());
      } catch (TransportException e) {
        one = new TransferStatus.Failed(e.getMessage());
      }
      if (one instanceof TransferStatus.Failed) {
        return one;
      }
      if (!(one instanceof TransferStatus.Done)) {
        status = one;
      }
    }
    return status;
  }

  /** Hands the observer what the transport measured of each READ of a load that finished. */
  void reportTelemetry(Load load) {
    for (Load.Read read : load.reads()) {
      Optional<TransferTelemetry> telemetry;
      try {
        telemetry = ranks.transport(read.consumerRank()).telemetry(read.handle());
      } catch (TransportException e) {
        // The bytes are in place: a measurement that cannot be read is no reason to fail the load.
        LOG.log(
            Level.WARNING,
            "reading the telemetry of the read of " + load.requestId() + ": " + e.getMessage());
        continue;
      }
      telemetry.ifPresent(t -> counters.transferTelemetry(load.requestId(), t));
    }
  }

  /** Releases every READ of a load still posted: no byte lands after this returns. */
  void release(Load load) {
    release(load.requestId(), load.takeReads());
  }

  /** Releases every prepared list. */
  void close() {
    prepared.close();
  }

  private void release(String requestId, List<Load.Read> reads) {
    for (Load.Read read : reads) {
      try {
        ranks.transport(read.consumerRank()).release(read.handle());
      } catch (TransportException e) {
        LOG.log(Level.WARNING, "releasing the read of " + requestId + ": " + e.getMessage());
      }
    }
  }
}
