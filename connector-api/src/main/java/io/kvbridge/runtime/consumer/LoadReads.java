package io.kvbridge.runtime.consumer;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.runtime.engine.ConnectorCounters;
import io.kvbridge.runtime.engine.Ranks;
import io.kvbridge.spi.ReadStaging;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.TransferTelemetry;
import io.kvbridge.transfer.TransportException;
import java.lang.System.Logger.Level;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
  private final ReadStaging settings;
  private final StagingAreas staging;

  LoadReads(Ranks ranks, ConnectorCounters counters, long minStageBytes, ReadStaging staging) {
    this.ranks = ranks;
    this.counters = counters;
    this.minStageBytes = minStageBytes;
    this.prepared = new PreparedReads(ranks);
    this.settings = staging;
    this.staging = new StagingAreas(ranks, staging);
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
   * gives (of at least the stage bytes this was made with, at most half the staging area), each its
   * own READs, so that the blocks of a stage are checked while later stages still move: what was
   * posted. A pair the staging model stages reads into the consumer rank's staging area; a stage
   * that finds no room there while earlier stages of the load hold some waits, unposted, for {@link
   * #postWaiting} once they gave theirs back (and is read in place where the load holds none, so
   * that it always moves).
   *
   * @throws TransportException if a transport refuses a READ; those posted before it are released
   * @throws IllegalArgumentException if the plan does not fit the ranks; likewise
   */
  Load.Posting post(Load load, TransferPlanner.Request plan) {
    Load.Posting posting = new Load.Posting();
    if (load.params().streamed()) {
      // A streamed lease: the layers announced so far now; each later announcement its own stage.
      if (load.layersAnnounced() > 0) {
        addLayerStages(posting, plan, new TransferPlanner.Layers(0, load.layersAnnounced()));
      }
      postStages(load, plan, posting);
      return posting;
    }
    int first = plan.firstBlock();
    int blocks = plan.producerBlocks().size() - first;
    int[] bounds =
        ReadPlan.stageBounds(
            plan.producer(), first, blocks, minStageBytes, ReadPlan.maxStageBytes(settings));
    for (int s = 0; s + 1 < bounds.length; s++) {
      posting.addStage(bounds[s], bounds[s + 1]);
    }
    postStages(load, plan, posting);
    return posting;
  }

  /**
   * Posts the read of the layers {@code layers} of a streamed {@code load} that reads already, in
   * stages of their own ({@link #addLayerStages}), read in place.
   *
   * @throws TransportException if a transport refuses a READ; the load's reads are released then
   * @throws IllegalArgumentException if the plan does not fit the ranks; likewise
   */
  void postLayers(Load load, TransferPlanner.Layers layers) {
    TransferPlanner.Request plan = load.plan();
    addLayerStages(load.posting(), plan, layers);
    postStages(load, plan, load.posting());
  }

  /**
   * Adds the read of the layers {@code layers} of every block of {@code plan} as stages of
   * consecutive blocks ({@link ReadPlan#stageBounds(int, int, long, long, long)}, the last ones at
   * least {@link ReadPlan#MIN_LAYER_STAGE_BYTES} or this consumer's stage bytes if fewer): the
   * blocks of a stage are checked while the next ones still move, so that what is left to check
   * once a streamed request's last layer landed is a small stage rather than the whole layer.
   */
  private void addLayerStages(
      Load.Posting posting, TransferPlanner.Request plan, TransferPlanner.Layers layers) {
    int first = plan.firstBlock();
    int blocks = plan.producerBlocks().size() - first;
    KvLayout producer = plan.producer().get(0);
    long bytes =
        (long) blocks
            * producer.blockBytes()
            * plan.producer().size()
            / producer.layers()
            * (layers.to() - layers.from());
    int[] bounds =
        ReadPlan.stageBounds(
            first,
            blocks,
            bytes,
            Math.min(minStageBytes, ReadPlan.MIN_LAYER_STAGE_BYTES),
            Long.MAX_VALUE);
    for (int s = 0; s + 1 < bounds.length; s++) {
      posting.addStage(bounds[s], bounds[s + 1], layers);
    }
  }

  /**
   * Posts the stages of {@code load}'s read that waited for staging room, as far as the room now
   * allows.
   *
   * @throws TransportException if a transport refuses a READ; the load's reads are released then
   * @throws IllegalArgumentException if the plan does not fit the ranks; likewise
   */
  void postWaiting(Load load) {
    if (load.posting().nextUnposted().isPresent()) {
      postStages(load, load.plan(), load.posting());
    }
  }

  private void postStages(Load load, TransferPlanner.Request plan, Load.Posting posting) {
    Map<TransferPlanner.RankPair, StagedRead> unposted = new HashMap<>();
    try {
      for (Optional<Load.Stage> next = posting.nextUnposted();
          next.isPresent();
          next = posting.nextUnposted()) {
        Load.Stage stage = next.get();
        if (stage.layers().isPresent()) {
          // Some layers of a streamed lease: read in place, never staged.
          posting.beginStage(stage);
          TransferPlanner.plan(
                  plan,
                  stage.fromIndex(),
                  stage.toIndex(),
                  stage.layers().get(),
                  TransferPlanner.Staging.NONE)
              .forEach((pair, pieces) -> prepared.post(load.peer(), pair, pieces, posting));
          continue;
        }
        Optional<Map<TransferPlanner.RankPair, StagedRead>> reserved =
            staging.reserve(plan, stage.fromIndex(), stage.toIndex(), posting.holdsStaging());
        if (reserved.isEmpty()) {
          return; // waits for the load's earlier stages to give their staging back
        }
        unposted.putAll(reserved.get());
        posting.beginStage(stage);
        TransferPlanner.plan(
                plan,
                stage.fromIndex(),
                stage.toIndex(),
                (r, q) -> unposted.containsKey(new TransferPlanner.RankPair(r, q)))
            .forEach(
                (pair, pieces) -> {
                  StagedRead staged = unposted.remove(pair);
                  if (staged == null) {
                    prepared.post(load.peer(), pair, pieces, posting);
                  } else {
                    try {
                      prepared.postStaged(load.peer(), pair, pieces, staged, posting);
                    } catch (RuntimeException e) {
                      staged.release();
                      throw e;
                    }
                  }
                });
      }
    } catch (TransportException | IllegalArgumentException e) {
      unposted.values().forEach(StagedRead::release);
      release(load.requestId(), posting.takeReads());
      throw e;
    }
  }

  /**
   * Posts again the first stage of a streamed {@code load} whose READs failed, its failed READs
   * released first: whether there was one, read in place.
   *
   * @throws TransportException if a transport refuses a READ; the load's reads are released then
   * @throws IllegalArgumentException if the plan does not fit the ranks; likewise
   */
  boolean repostFailedStage(Load load) {
    for (Load.Stage stage : load.uncheckedStages()) {
      if (stage.layers().isPresent() && status(stage.reads()) instanceof TransferStatus.Failed) {
        release(load.requestId(), load.posting().unpost(stage));
        postStages(load, load.plan(), load.posting());
        return true;
      }
    }
    return false;
  }

  /**
   * Copies the rows of every staged READ among {@code reads} (all done) into place and gives their
   * staging ranges back.
   */
  void scatter(List<Load.Read> reads) {
    for (Load.Read read : reads) {
      read.staged().ifPresent(staged -> staged.scatterInto(ranks.memory(read.consumerRank())));
    }
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

  /** The bytes of the ranks' staging areas that staged reads hold now. */
  long stagingBytesInUse() {
    return staging.bytesInUse();
  }

  /** Releases every prepared list and staging area; every load's reads were released first. */
  void close() {
    prepared.close();
    staging.close();
  }

  private void release(String requestId, List<Load.Read> reads) {
    for (Load.Read read : reads) {
      try {
        ranks.transport(read.consumerRank()).release(read.handle());
      } catch (TransportException e) {
        LOG.log(Level.WARNING, "releasing the read of " + requestId + ": " + e.getMessage());
      }
      // No byte lands after the release: the staging range is free for another read.
      read.staged().ifPresent(StagedRead::release);
    }
  }
}
