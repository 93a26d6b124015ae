package io.kvbridge.benchmarks.transfer;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.runtime.consumer.ReadPlan;
import io.kvbridge.runtime.consumer.StagingModel;
import java.util.List;

/**
 * One request a consumer plans and reads: both sides' layouts by rank, the lease's blocks on each
 * side in token order, and the prompt's length, all of it read.
 */
public interface PlannedRequest {

  /** The producer's layouts, by rank. */
  List<KvLayout> producer();

  /** The consumer's layouts, by rank. */
  List<KvLayout> consumer();

  /** The lease's block ids on the producer, in token order. */
  List<Integer> producerBlocks();

  /** The consumer's block ids for the prompt, in token order. */
  List<Integer> consumerBlocks();

  /** The prompt's length in tokens. */
  int tokens();

  /** What the consumer's planner makes of this request, reading in place. */
  default ReadPlan plan() {
    return plan(StagingModel.NEVER);
  }

  /** What the planner of a consumer weighing staging by {@code staging} makes of this request. */
  default ReadPlan plan(StagingModel staging) {
    return ReadPlan.of(
        producer(), consumer(), producerBlocks(), consumerBlocks(), tokens(), 0, staging);
  }
}
