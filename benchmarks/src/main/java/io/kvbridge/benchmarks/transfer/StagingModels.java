package io.kvbridge.benchmarks.transfer;

import io.kvbridge.fake.FakeFabric;
import io.kvbridge.runtime.consumer.CopyCost;
import io.kvbridge.runtime.consumer.StagingModel;
import io.kvbridge.spi.ReadStaging;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.Transport;

/**
 * The staging cost model a consumer rank on a transport weighs its reads by, as the consumer makes
 * it: the transport's {@link Transport#readCost()} and a {@link CopyCost} measured on memory the
 * transport allocates, as much of it as a consumer's default staging area gives the measurement.
 */
final class StagingModels {

  private StagingModels() {}

  /** The model of a consumer rank on {@code carrier} in {@code mode}. */
  static StagingModel of(ManyPeersBenchmark.Carrier carrier, ReadStaging.Mode mode) {
    if (mode == ReadStaging.Mode.NEVER) {
      return StagingModel.NEVER;
    }
    Transport agent =
        carrier == ManyPeersBenchmark.Carrier.FAKE
            ? new FakeFabric().join("staging-probe")
            : PlannedRead.nixlHostAgent("staging-probe");
    try (agent) {
      KvMemory scratch = agent.allocate(CopyCost.MEASURE_MOST_BYTES);
      try {
        return new StagingModel(mode, agent.readCost(), CopyCost.measure(scratch));
      } finally {
        scratch.close();
      }
    }
  }
}
