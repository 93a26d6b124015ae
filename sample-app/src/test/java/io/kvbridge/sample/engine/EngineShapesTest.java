package io.kvbridge.sample.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.layout.KvModel;
import io.kvbridge.lease.EndReason;
import io.kvbridge.sample.engine.Generation.KvSource;
import io.kvbridge.spi.LoadFailurePolicy;
import io.kvbridge.spi.TransferParams;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A prefill engine and a decode engine that differ in tensor parallelism and block size still
 * decode the colocated reference: every head of every token, the partly filled last block included,
 * lands where the decode engine's ranks look for it.
 */
class EngineShapesTest {

  /** 98 bytes: a partly filled last block for every block size below. */
  private static final String PROMPT =
      "Disaggregated serving: the prefill node computes the prompt and the decode node continues it.  ...";

  private EnginePair pair;

  @AfterEach
  void close() {
    if (pair != null) {
      pair.close();
    }
  }

  static Stream<Arguments> shapes() {
    List<Arguments> all = new ArrayList<>();
    for (int prefillTp : new int[] {1, 2, 4}) {
      for (int prefillBlock : new int[] {8, 16, 32}) {
        for (int decodeTp : new int[] {1, 2, 4}) {
          for (int decodeBlock : new int[] {8, 16, 32}) {
            all.add(Arguments.of(prefillTp, prefillBlock, decodeTp, decodeBlock));
          }
        }
      }
    }
    return all.stream();
  }

  @ParameterizedTest(name = "P TP{0} x {1} tokens -> D TP{2} x {3} tokens")
  @MethodSource("shapes")
  void everyPairOfShapesDecodesTheColocatedReference(
      int prefillTp, int prefillBlock, int decodeTp, int decodeBlock) throws Exception {
    pair =
        new EnginePair(
            EnginePair.shape(prefillTp, prefillBlock, 0),
            EnginePair.shape(decodeTp, decodeBlock, 0),
            LoadFailurePolicy.FAIL);

    Generation decoded = transfer(PROMPT, 11);

    assertThat(decoded.text()).isEqualTo(ToyModel.standard().referenceCompletion(PROMPT, 11));
    assertThat(decoded.kvSource()).isEqualTo(KvSource.LOADED);
    assertThat(decoded.loadedTokens()).isEqualTo(PROMPT.length());
    assertThat(decoded.computedTokens()).isZero();
    assertThat(pair.decode.stats().loadedBlocks())
        .isEqualTo((PROMPT.length() + decodeBlock - 1) / decodeBlock);
    await().until(() -> pair.prefill.stats().heldBlocks() == 0);
    assertThat(pair.prefill.connector().status().producer().orElseThrow().leasesEnded())
        .containsEntry(EndReason.READ, 1L);
  }

  @ParameterizedTest
  @EnumSource(KvLayout.MemoryOrder.class)
  void bothMemoryOrdersTranslateBetweenShapes(KvLayout.MemoryOrder order) throws Exception {
    pair =
        new EnginePair(
            EnginePair.shape(4, 8, 0, order),
            EnginePair.shape(2, 32, 0, order),
            LoadFailurePolicy.FAIL);

    Generation decoded = transfer(PROMPT, 6);

    assertThat(decoded.text()).isEqualTo(ToyModel.standard().referenceCompletion(PROMPT, 6));
  }

  @ParameterizedTest(name = "{0}: P TP{1} {2}/{3} -> D TP{4} {5}/{6}")
  @MethodSource("presets")
  void aPublishedModelsKvMovesAtItsRealSizeAndDecodesTheReference(
      KvModel model,
      int prefillTp,
      KvLayout.Placement prefillPlacement,
      KvLayout.MemoryOrder prefillOrder,
      int decodeTp,
      KvLayout.Placement decodePlacement,
      KvLayout.MemoryOrder decodeOrder)
      throws Exception {
    // 98 tokens of llama-3.1-8b: 12.25 MiB of KV, read across different TP degrees and memory
    // shapes, each per-layer tensor registered as a region of its own.
    pair =
        new EnginePair(
            new EngineShape(
                model.layout(16, 8, prefillOrder).withMemory(prefillOrder, prefillPlacement),
                prefillTp,
                0),
            new EngineShape(
                model.layout(32, 4, decodeOrder).withMemory(decodeOrder, decodePlacement),
                decodeTp,
                0),
            LoadFailurePolicy.FAIL);

    Generation decoded = transfer(PROMPT, 5);

    ToyModel reference = new ToyModel((int) model.bytesPerToken());
    assertThat(decoded.text()).isEqualTo(reference.referenceCompletion(PROMPT, 5));
    assertThat(decoded.loadedTokens()).isEqualTo(PROMPT.length());
  }

  static Stream<Arguments> presets() {
    KvLayout.MemoryOrder nhd = KvLayout.MemoryOrder.BLOCK_MAJOR;
    KvLayout.MemoryOrder hnd = KvLayout.MemoryOrder.HEAD_MAJOR;
    KvLayout.Placement cross = KvLayout.Placement.CROSS_LAYER;
    KvLayout.Placement perLayer = KvLayout.Placement.PER_LAYER;
    KvLayout.Placement blockFirst = KvLayout.Placement.PER_LAYER_BLOCK_FIRST;
    KvLayout.Placement perPlane = KvLayout.Placement.PER_LAYER_PLANE;
    return Stream.of(
        // vLLM's FlashAttention tensors, one per layer, on both engines.
        Arguments.of(KvModel.LLAMA_3_1_8B, 2, perLayer, nhd, 4, perLayer, nhd),
        Arguments.of(KvModel.LLAMA_3_1_8B, 1, cross, hnd, 1, cross, hnd),
        // Cross-layer blocks into separate K and V tensors per layer, another order.
        Arguments.of(KvModel.QWEN_2_5_7B, 4, cross, hnd, 8, perPlane, nhd),
        // An MLA latent per layer, on every rank.
        Arguments.of(KvModel.DEEPSEEK_V3, 2, blockFirst, hnd, 4, blockFirst, hnd),
        Arguments.of(KvModel.DEEPSEEK_V3, 8, blockFirst, hnd, 1, cross, hnd));
  }

  @ParameterizedTest(name = "{0} tokens")
  @MethodSource("shortPrompts")
  void aPromptWithinOneBlockOfEitherEngineIsLoadedWhole(int length) throws Exception {
    pair =
        new EnginePair(
            EnginePair.shape(2, 16, 0), EnginePair.shape(1, 32, 0), LoadFailurePolicy.FAIL);
    String prompt = PROMPT.substring(0, length);

    Generation decoded = transfer(prompt, 4);

    assertThat(decoded.loadedTokens()).isEqualTo(length);
    assertThat(decoded.text()).isEqualTo(ToyModel.standard().referenceCompletion(prompt, 4));
  }

  static Stream<Integer> shortPrompts() {
    return Stream.of(1, 15, 16, 17, 31, 32, 33);
  }

  private Generation transfer(String prompt, int maxTokens) throws Exception {
    TransferParams params =
        pair.prefill
            .submit(new EngineRequest("p-1", prompt, 1, true, Optional.empty()))
            .get()
            .transferParams()
            .orElseThrow();
    return pair.decode
        .submit(new EngineRequest("d-1", prompt, maxTokens, false, Optional.of(params)))
        .get();
  }
}
