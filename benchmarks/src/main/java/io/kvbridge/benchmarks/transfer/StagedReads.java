package io.kvbridge.benchmarks.transfer;

import io.kvbridge.benchmarks.JsonLines;
import io.kvbridge.runtime.consumer.StagingModel;
import java.util.Locale;

/**
 * Records what a real-size READ trial read, one JSON line per trial, in the file the system
 * property {@value #PROPERTY} names (nothing when it is unset): the request, the descriptors and
 * READs the plan holds, how many READs were staged, the bytes they move, and the staging model's
 * figures, so the report shows what the consumer chose and why.
 */
final class StagedReads {

  /** The system property naming the JSON-lines file. */
  static final String PROPERTY = "kvbridge.bench.staged-reads";

  private StagedReads() {}

  static void record(RealSizeReadBenchmark.Carried trial, StagingModel model, PlannedRead read) {
    String line =
        String.format(
            Locale.ROOT,
            "{\"model\": \"%s\", \"tp\": \"%s\", \"tokens\": \"%d\", \"transport\": \"%s\","
                + " \"staging\": \"%s\", \"descriptors\": %d, \"reads\": %d, \"staged\": %b,"
                + " \"stagedReads\": %d,"
                + " \"bytesMoved\": %d, \"readNanosPerDescriptor\": %.3f,"
                + " \"readNanosPerByte\": %.5f, \"copyNanosPerCopy\": %.3f,"
                + " \"copyNanosPerRow\": %.3f, \"copyNanosPerByte\": %.5f}%n",
            trial.model,
            trial.tp,
            trial.tokens,
            trial.transport,
            trial.staging,
            read.descriptors(),
            read.plan().reads().size(),
            read.stagedReads() > 0,
            read.stagedReads(),
            read.bytesMoved(),
            model.read().nanosPerDescriptor(),
            model.read().nanosPerByte(),
            model.copy().nanosPerCopy(),
            model.copy().nanosPerRow(),
            model.copy().nanosPerByte());
    JsonLines.append(PROPERTY, line, "the staged reads");
  }
}
