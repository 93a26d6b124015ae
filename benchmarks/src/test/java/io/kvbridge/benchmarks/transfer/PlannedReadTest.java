package io.kvbridge.benchmarks.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.layout.KvLayout.MemoryOrder;
import io.kvbridge.runtime.consumer.ReadPlan;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PlannedReadTest {

  @ParameterizedTest
  @CsvSource({"2x4, 8, HEAD_MAJOR", "4x1, 32, HEAD_MAJOR", "1x2, 16, BLOCK_MAJOR"})
  void aPlannedReadPutsTheProducersBytesWhereThePlanSays(
      String tp, int consumerBlock, MemoryOrder order) {
    try (PlannedRead read = new PlannedRead(PlanShape.of(tp, consumerBlock, 64, order))) {
      assertThat(read.consumerHoldsTheProducersBytes()).isFalse();

      read.read();

      assertThat(read.consumerHoldsTheProducersBytes()).isTrue();
      assertThat(read.descriptors()).isEqualTo(read.shape().plan().descriptors());
    }
  }

  @Test
  void aPlanMovesThePromptsKvOnce() {
    PlanShape shape = PlanShape.of("1x8", 4, 1024, MemoryOrder.HEAD_MAJOR);

    ReadPlan plan = shape.plan();

    assertThat(plan.bytes()).isEqualTo(shape.bytes()).isEqualTo(1024L * 32 * 2 * 8 * 128 * 2);
    assertThat(plan.reads()).hasSize(8);
  }

  @Test
  void noBlockOfThePromptFollowsTheOneBeforeItInThePool() {
    List<Integer> blocks = PlanShape.of("1x1", 16, 1024, MemoryOrder.HEAD_MAJOR).producerBlocks();

    assertThat(blocks).doesNotHaveDuplicates().hasSize(64).allMatch(b -> b >= 0 && b < 64);
    for (int i = 1; i < blocks.size(); i++) {
      assertThat(blocks.get(i)).isNotEqualTo(blocks.get(i - 1) + 1);
    }
  }

  @Test
  void aPromptTooLongForTheHeapIsRefused() {
    PlanShape shape = PlanShape.of("1x1", 16, PlannedRead.MAX_TOKENS * 2, MemoryOrder.HEAD_MAJOR);

    assertThatThrownBy(() -> new PlannedRead(shape)).hasMessageContaining("at most");
  }

  @Test
  void aTpThatIsNotProducerByConsumerRanksIsRefused() {
    assertThatThrownBy(() -> PlanShape.of("2:4", 16, 64, MemoryOrder.HEAD_MAJOR))
        .hasMessage("tp looks like 2x4 (producer ranks 'x' consumer ranks), got '2:4'");
  }

  @Test
  void theCountsHoldEveryCombinationOfTheParametersGiven(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("counts.json");

    PlanCounts.main(
        new String[] {
          file.toString(),
          "-p",
          "tp=1x2,2x2",
          "-p",
          "consumerBlock=16",
          "-p",
          "tokens=64",
          "-p",
          "order=HEAD_MAJOR"
        });

    assertThat(Files.readString(file))
        .startsWith("[\n")
        .contains(
            "{\"tp\": \"1x2\", \"consumerBlock\": \"16\", \"tokens\": \"64\", \"order\":"
                + " \"HEAD_MAJOR\", \"reads\": 2, \"descriptors\": 512,")
        .contains("{\"tp\": \"2x2\", \"consumerBlock\": \"16\", \"tokens\": \"64\"")
        .endsWith("]\n");
  }
}
