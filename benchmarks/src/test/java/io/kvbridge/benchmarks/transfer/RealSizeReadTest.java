package io.kvbridge.benchmarks.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.benchmarks.transfer.RealSizeShape.Model;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.runtime.consumer.ReadPlan;
import io.kvbridge.runtime.consumer.StagingModel;
import io.kvbridge.spi.ReadStaging;
import io.kvbridge.transfer.ReadCost;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RealSizeReadTest {

  @ParameterizedTest
  @CsvSource({
    "LLAMA_3_1_8B, 1x1",
    "LLAMA_3_1_8B, 2x1",
    "LLAMA_3_1_8B, 1x2",
    "DEEPSEEK_V3, 2x1",
    "DEEPSEEK_V3, 1x2"
  })
  void aReadOverRegionsPerLayerPutsTheProducersBytesWhereThePlanSays(Model model, String tp) {
    RealSizeShape shape = RealSizeShape.of(model, tp, 64);
    try (PlannedRead read = PlannedRead.overFake(shape)) {
      int unread = read.checkContent();
      assertThat(read.consumerHoldsTheProducersBytes()).isFalse();

      read.read();

      assertThat(read.consumerHoldsTheProducersBytes()).isTrue();
      assertThat(read.descriptors()).isEqualTo(shape.plan().descriptors());
      assertThat(read.checkContent()).isNotEqualTo(unread).isEqualTo(read.checkContent());
    }
  }

  @ParameterizedTest
  @CsvSource({"2x1", "1x2"})
  void aStagedReadLandsInStagingMemoryAndItsCopiesPutEveryRowInPlace(String tp) {
    RealSizeShape shape = RealSizeShape.of(Model.LLAMA_3_1_8B, tp, 64);
    StagingModel always =
        StagingModels.of(ManyPeersBenchmark.Carrier.FAKE, ReadStaging.Mode.ALWAYS);
    try (PlannedRead inPlace = PlannedRead.overFake(shape);
        PlannedRead staged = PlannedRead.overFake(shape, always)) {
      inPlace.read();
      int expected = inPlace.checkContent();

      staged.read();

      assertThat(staged.stagedReads()).isEqualTo(2);
      assertThat(staged.consumerHoldsTheProducersBytes()).isTrue();
      assertThat(staged.checkContent()).isEqualTo(expected);
      // A slab per (block, layer, plane) against a piece per (token, layer, plane).
      assertThat(staged.descriptors() * 16).isEqualTo(inPlace.descriptors());
      // 2x1: the consumer takes every head of each producer slab, exactly the bytes it needs.
      // 1x2: a slab's span runs from the rank's first head of token 0 to its last of token 15:
      // twice what it needs, less the other rank's 4 heads (1 KiB) of one token, per slab.
      long slabs = 2L * 4 * 32 * 2; // consumer ranks x blocks x layers x planes
      assertThat(staged.bytesMoved())
          .isEqualTo(
              tp.equals("2x1") ? inPlace.bytesMoved() : 2 * inPlace.bytesMoved() - slabs * 1024);
    }
  }

  @Test
  void theModelOfATransportWithCostlyDescriptorsStagesAndNeverNeverDoes() {
    RealSizeShape shape = RealSizeShape.of(Model.LLAMA_3_1_8B, "1x2", 1024);
    StagingModel costly =
        new StagingModel(
            ReadStaging.Mode.AUTO,
            new ReadCost(1_700, 0.4),
            StagingModels.of(ManyPeersBenchmark.Carrier.FAKE, ReadStaging.Mode.AUTO).copy());

    assertThat(shape.plan(costly).reads()).allMatch(ReadPlan.Read::staged);
    assertThat(shape.plan(StagingModel.NEVER).reads()).noneMatch(ReadPlan.Read::staged);
  }

  @Test
  void eachRankKeepsItsKvInOneRegionPerLayer() {
    RealSizeShape llama = RealSizeShape.of(Model.LLAMA_3_1_8B, "1x2", 1024);
    RealSizeShape deepseek = RealSizeShape.of(Model.DEEPSEEK_V3, "2x1", 1024);

    KvLayout rank = llama.consumer().get(1);
    assertThat(rank.regions()).isEqualTo(32);
    assertThat(rank.regionBytes() * rank.regions()).isEqualTo(1024L * 128 * 1024 / 2);
    assertThat(deepseek.producer()).allMatch(l -> l.regions() == 61);
    assertThat(deepseek.plan().bytes()).isEqualTo(1024L * 70_272);
    assertThat(llama.producerBlocks()).hasSize(64).doesNotHaveDuplicates();
  }

  @Test
  void theCopyMovesWhatThePlanMoves() {
    RealSizeShape shape = RealSizeShape.of(Model.DEEPSEEK_V3, "1x2", 64);
    RegionCopy copy = new RegionCopy(shape);

    copy.copy();

    assertThat(copy.copied()).isTrue();
    assertThat(copy.bytes()).isEqualTo(shape.plan().bytes()).isEqualTo(2L * 64 * 70_272);
  }

  @Test
  void aPromptOfPartBlocksIsRefused() {
    assertThatThrownBy(() -> RealSizeShape.of(Model.LLAMA_3_1_8B, "1x1", 1000))
        .hasMessageContaining("multiple of 16");
  }

  @Test
  void theCountsHoldEveryCombinationOfTheParametersGiven(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("counts.json");

    RealSizeCounts.main(
        new String[] {
          file.toString(), "-p", "tokens=64", "-p", "model=DEEPSEEK_V3", "-p", "transport=FAKE"
        });

    String json = Files.readString(file);
    assertThat(json.lines().filter(l -> l.contains("\"model\"")).count()).isEqualTo(3);
    assertThat(json)
        .contains(
            "{\"model\": \"DEEPSEEK_V3\", \"tp\": \"1x2\", \"tokens\": \"64\", \"name\":"
                + " \"deepseek-ai/DeepSeek-V3\", \"placement\": \"PER_LAYER_BLOCK_FIRST\","
                + " \"bytesPerToken\": 70272, \"blocks\": 4, \"reads\": 2");
  }
}
