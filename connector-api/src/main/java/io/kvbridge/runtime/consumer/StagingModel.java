package io.kvbridge.runtime.consumer;

import io.kvbridge.spi.ReadStaging;
import io.kvbridge.transfer.ReadCost;

/**
 * The cost model that chooses, for one (consumer rank, producer rank) pair whose memory splits a
 * token's heads differently, between reading in place (a descriptor per token, layer and plane) and
 * reading the producer's slabs whole into a staging area, then copying each token's heads into
 * place. In {@link ReadStaging.Mode#AUTO} it stages when
 *
 * <pre>{@code
 * read(staged descriptors, staged bytes) + copy(copies, rows, bytes) < read(in-place descriptors, bytes)
 * }</pre>
 *
 * with the transport's measured {@link ReadCost} and the staging memory's measured {@link
 * CopyCost}. The copy is counted whole, though a staged stage's copy runs while later stages still
 * move: it runs on the engine's thread, which is time the engine does not step.
 *
 * @param mode auto, always or never
 * @param read what a READ costs through the consumer rank's transport
 * @param copy what a local copy costs on the rank's staging memory
 */
public record StagingModel(ReadStaging.Mode mode, ReadCost read, CopyCost copy) {

  /** Never stages. */
  public static final StagingModel NEVER =
      new StagingModel(ReadStaging.Mode.NEVER, ReadCost.UNMEASURED, new CopyCost(0, 0, 0));

  /** Whether a pair whose two ways cost {@code estimate} is read staged. */
  boolean stages(TransferPlanner.StagingEstimate estimate) {
    return switch (mode) {
      case NEVER -> false;
      case ALWAYS -> true;
      case AUTO -> stagedNanos(estimate) < inPlaceNanos(estimate);
    };
  }

  /** What reading the pair in place costs, in nanoseconds. */
  double inPlaceNanos(TransferPlanner.StagingEstimate estimate) {
    return read.nanos(estimate.inPlaceDescriptors(), estimate.bytes());
  }

  /** What reading the pair staged and scattering it costs, in nanoseconds. */
  double stagedNanos(TransferPlanner.StagingEstimate estimate) {
    return read.nanos(estimate.stagedDescriptors(), estimate.stagedBytes())
        + copy.nanos(estimate.copies(), estimate.rows(), estimate.bytes());
  }
}
