package io.kvbridge.runtime.consumer;

import io.kvbridge.runtime.engine.Ranks;
import io.kvbridge.spi.ReadStaging;
import io.kvbridge.transfer.KvRegions;
import java.lang.System.Logger.Level;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The staging areas of this engine's ranks and the choice of which rank pairs of a stage read
 * staged: each rank's area is allocated at its first staged read ({@link StagingArea}), its copies
 * measured then where the mode is {@code auto}; a rank whose area cannot be had reads in place.
 *
 * <p>Threads: confined to the connector's lock.
 */
final class StagingAreas {

  // Under the consumer's name, where a load's reads have always been logged.
  private static final System.Logger LOG = System.getLogger(Consumer.class.getName());

  private final Ranks ranks;
  private final ReadStaging settings;
  // Per consumer rank: its staging area once a staged read needed it; unusable ones stay empty.
  private final StagingArea[] areas;
  private final boolean[] unusable;

  StagingAreas(Ranks ranks, ReadStaging settings) {
    this.ranks = ranks;
    this.settings = settings;
    this.areas = new StagingArea[ranks.count()];
    this.unusable = new boolean[ranks.count()];
  }

  /**
   * The pairs of producer blocks {@code [from, to)} of {@code plan} read staged, each with the
   * range it reserved: those the consumer rank's {@link StagingModel} stages and whose staging area
   * has room. Empty (nothing reserved) if a pair the model stages finds no room while {@code
   * mayWait}: the stage then waits for room; otherwise such a pair is read in place.
   */
  Optional<Map<TransferPlanner.RankPair, StagedRead>> reserve(
      TransferPlanner.Request plan, int from, int to, boolean mayWait) {
    Map<TransferPlanner.RankPair, StagedRead> staged = new HashMap<>();
    if (settings.mode() == ReadStaging.Mode.NEVER) {
      return Optional.of(staged);
    }
    for (int r = 0; r < plan.consumer().size(); r++) {
      for (int q = 0; q < plan.producer().size(); q++) {
        if (!TransferPlanner.stageable(plan, r, q)) {
          continue;
        }
        Optional<StagingArea> area = area(r);
        if (area.isEmpty()) {
          break;
        }
        TransferPlanner.StagingEstimate estimate = TransferPlanner.estimate(plan, r, q, from, to);
        StagingModel model =
            new StagingModel(settings.mode(), ranks.transport(r).readCost(), area.get().copyCost());
        if (estimate.stagedBytes() == 0 || !model.stages(estimate)) {
          continue;
        }
        OptionalLong at = area.get().reserve(estimate.stagedBytes());
        if (at.isPresent()) {
          staged.put(
              new TransferPlanner.RankPair(r, q),
              new StagedRead(area.get(), at.getAsLong(), estimate.stagedBytes()));
        } else if (mayWait) {
          staged.values().forEach(StagedRead::release);
          return Optional.empty();
        }
      }
    }
    return Optional.of(staged);
  }

  /**
   * Consumer rank {@code rank}'s staging area, allocated at its first use; empty if it cannot be
   * had (logged once, and the rank's reads stay in place).
   */
  private Optional<StagingArea> area(int rank) {
    if (areas[rank] == null && !unusable[rank]) {
      KvRegions kv = ranks.memory(rank);
      if (ranks.transport(rank).memoryKind() != kv.kind()) {
        // A copy across the bus per row would cost more than any descriptor it saves.
        unusable(
            rank,
            "its transport allocates "
                + ranks.transport(rank).memoryKind()
                + " memory"
                + " and its KV memory is "
                + kv.kind());
        return Optional.empty();
      }
      try {
        StagingArea area =
            StagingArea.allocate(
                ranks.transport(rank),
                settings.bytesPerRank(),
                settings.mode() == ReadStaging.Mode.AUTO);
        if (area.memory().deviceId() != kv.deviceId()) {
          area.close();
          unusable(
              rank,
              "its staging memory is on device "
                  + area.memory().deviceId()
                  + " and its KV memory on device "
                  + kv.deviceId());
          return Optional.empty();
        }
        areas[rank] = area;
        LOG.log(
            Level.INFO,
            "staging area of rank {0}: {1} bytes, copies measured at {2}",
            rank,
            settings.bytesPerRank(),
            area.copyCost());
      } catch (RuntimeException | OutOfMemoryError e) {
        unusable(
            rank,
            "its staging area of " + settings.bytesPerRank() + " bytes could not be had: " + e);
      }
    }
    return Optional.ofNullable(areas[rank]);
  }

  /** Rank {@code rank} reads in place from now on, because of {@code why}: logged once. */
  private void unusable(int rank, String why) {
    unusable[rank] = true;
    LOG.log(Level.WARNING, "rank " + rank + " reads in place: " + why);
  }

  /** The bytes of every area that staged reads hold now. */
  long bytesInUse() {
    long sum = 0;
    for (StagingArea area : areas) {
      sum += area == null ? 0 : area.reservedBytes();
    }
    return sum;
  }

  /** Deregisters and frees every area; every read that lands in one was released first. */
  void close() {
    for (int rank = 0; rank < areas.length; rank++) {
      if (areas[rank] != null) {
        try {
          areas[rank].close();
        } catch (RuntimeException e) {
          LOG.log(Level.WARNING, "closing the staging area of rank " + rank + ": " + e);
        }
        areas[rank] = null;
      }
    }
  }
}
