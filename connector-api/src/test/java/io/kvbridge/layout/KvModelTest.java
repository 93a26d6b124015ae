package io.kvbridge.layout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class KvModelTest {

  private static final int KIB = 1024;

  @Test
  void presetsHoldTheBytesPerTokenTheirConfigsGive() {
    // layers × K,V × KV heads × head dim × 2 bytes (bf16); MLA: layers × (512 + 64) × 2.
    assertThat(KvModel.LLAMA_3_1_8B.bytesPerToken()).isEqualTo(128 * KIB);
    assertThat(KvModel.LLAMA_3_1_70B.bytesPerToken()).isEqualTo(320 * KIB);
    assertThat(KvModel.QWEN_2_5_7B.bytesPerToken()).isEqualTo(56 * KIB);
    assertThat(KvModel.MISTRAL_7B.bytesPerToken()).isEqualTo(128 * KIB);
    assertThat(KvModel.DEEPSEEK_V3.bytesPerToken()).isEqualTo(61 * 576 * 2);
  }

  @Test
  void aPresetIsFoundByItsNameWhateverTheCase() {
    assertThat(KvModel.preset(" Llama-3.1-8B ")).contains(KvModel.LLAMA_3_1_8B);
    assertThat(KvModel.preset("deepseek-v3")).contains(KvModel.DEEPSEEK_V3);
    assertThat(KvModel.preset("llama-3.1-405b")).isEmpty();
    assertThat(KvModel.presetNames())
        .isEqualTo("llama-3.1-8b, llama-3.1-70b, qwen2.5-7b, mistral-7b, deepseek-v3");
  }

  @Test
  void aPresetsLayoutHoldsEveryHeadAndItsBlocksHoldItsTokens() {
    KvLayout model = KvModel.LLAMA_3_1_8B.layout(16, 64, KvLayout.MemoryOrder.HEAD_MAJOR);

    assertThat(model.model()).isEqualTo("llama-3.1-8b");
    assertThat(model.headCount()).isEqualTo(8);
    assertThat(model.blockBytes()).isEqualTo(16 * 128 * KIB);
    assertThat(model.forRank(3, 8).headStart()).isEqualTo(3);
    assertThat(model.forRank(3, 8).blockBytes()).isEqualTo(16 * 16 * KIB);
  }

  @Test
  void theMlaPresetIsOneLatentPlaneOfOneHead() {
    KvLayout latent = KvModel.DEEPSEEK_V3.layout(64, 8, KvLayout.MemoryOrder.BLOCK_MAJOR);

    assertThat(KvModel.DEEPSEEK_V3.latent()).isTrue();
    assertThat(KvModel.LLAMA_3_1_70B.latent()).isFalse();
    assertThat(latent.planes()).isEqualTo(1);
    assertThat(latent.vectorBytes()).isEqualTo(576 * 2);
    assertThat(latent.blockBytes()).isEqualTo(64 * 61 * 576 * 2);
  }

  @Test
  void layoutsOfDifferentPresetsNeverPair() {
    KvLayout llama = KvModel.LLAMA_3_1_8B.layout(16, 8, KvLayout.MemoryOrder.HEAD_MAJOR);
    KvLayout mistral = KvModel.MISTRAL_7B.layout(16, 8, KvLayout.MemoryOrder.HEAD_MAJOR);

    assertThat(llama.blockBytes()).isEqualTo(mistral.blockBytes());
    assertThat(llama.incompatibilityWith(mistral)).isPresent();
  }

  @Test
  void aModelWithoutLayersOrWithThreePlanesIsRefusedNamingTheField() {
    assertThatThrownBy(() -> new KvModel("m", "o/m", 0, 2, 8, 128, 2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("layers");
    assertThatThrownBy(() -> new KvModel("m", "o/m", 4, 3, 8, 128, 2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("planes must be 1 or 2, got 3");
  }
}
