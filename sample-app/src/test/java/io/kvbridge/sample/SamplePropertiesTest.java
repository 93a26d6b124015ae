package io.kvbridge.sample;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.sample.engine.EngineShape;
import io.kvbridge.sample.engine.ToyModel;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

/** Invalid sample settings stop start-up with a message naming the property. */
class SamplePropertiesTest {

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner().withUserConfiguration(Bind.class);

  @Test
  void theContextDefaultsTo8192Tokens() {
    runner.run(
        context ->
            assertThat(context.getBean(SampleProperties.class).engine().context().tokens())
                .isEqualTo(8192));
  }

  @Test
  void aNegativeOrHugePrefillCostIsRejectedNamingTheProperty() {
    for (String cost : new String[] {"-1us", "11ms"}) {
      runner
          .withPropertyValues("kvbridge.sample.engine.prefill-cost=" + cost)
          .run(
              context ->
                  assertThat(context)
                      .getFailure()
                      .rootCause()
                      .hasMessageContaining(
                          "kvbridge.sample.engine.prefill-cost must be 0s to 10ms"));
    }
  }

  @Test
  void aContextOfNoTokensIsRejectedNamingTheProperty() {
    runner
        .withPropertyValues("kvbridge.sample.engine.max-context-tokens=0")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining(
                        "kvbridge.sample.engine.max-context-tokens must be positive"));
  }

  @Test
  void withoutNodeUrlsTheRouterCallsTheNodesOfThisServer() {
    runner.run(
        context -> {
          SampleProperties.Router router = context.getBean(SampleProperties.class).router();
          assertThat(router.prefillUrls()).isEmpty();
          assertThat(router.decodeUrls()).isEmpty();
        });
  }

  @Test
  void everyEngineHasOneRankSixteenTokenBlocksAndAPrefixCacheByDefault() {
    runner.run(
        context -> {
          EngineShape decode = context.getBean(SampleProperties.class).decodeEngine();
          assertThat(decode.tpDegree()).isEqualTo(1);
          assertThat(decode.tokensPerBlock()).isEqualTo(16);
          assertThat(decode.blockCount()).isEqualTo(4096);
          assertThat(decode.prefixCacheBlocks()).isEqualTo(512);
          assertThat(decode.model().order()).isEqualTo(KvLayout.MemoryOrder.HEAD_MAJOR);
          assertThat(decode.model()).isEqualTo(ToyModel.layout(16, 4096, decode.model().order()));
        });
  }

  @Test
  void nodeUrlsAreACommaSeparatedList() {
    runner
        .withPropertyValues(
            "kvbridge.sample.router.decode-urls=http://10.0.0.5:8200,http://10.0.0.6:8200")
        .run(
            context ->
                assertThat(context.getBean(SampleProperties.class).router().decodeUrls())
                    .extracting(Object::toString)
                    .containsExactly("http://10.0.0.5:8200", "http://10.0.0.6:8200"));
  }

  @Test
  void aNodeUrlThatIsNotAnAbsoluteHttpUrlIsRejectedNamingItsPlaceInTheList() {
    assertRejected(
        "kvbridge.sample.router.prefill-urls[1] must be an absolute http or https URL such as"
            + " http://10.0.0.5:8100, got 'localhost:8100'",
        "kvbridge.sample.router.prefill-urls=http://10.0.0.5:8100,localhost:8100");
  }

  @Test
  void aNodeListedTwiceIsRejected() {
    assertRejected(
        "kvbridge.sample.router.decode-urls lists http://10.0.0.5:8200 twice",
        "kvbridge.sample.router.decode-urls=http://10.0.0.5:8200,http://10.0.0.5:8200");
  }

  @Test
  void aHealthPathThatIsNotAnAbsolutePathIsRejected() {
    assertRejected(
        "kvbridge.sample.router.health-path must be a path starting with /, got 'actuator/health'",
        "kvbridge.sample.router.health-path=actuator/health");
  }

  @Test
  void aNatsUrlThatIsNotNatsIsRejected() {
    assertRejected(
        "kvbridge.sample.events.nats.url must be a nats:// URL such as nats://10.0.0.9:4222, got"
            + " 'http://10.0.0.9:4222'",
        "kvbridge.sample.events.nats.url=http://10.0.0.9:4222");
  }

  @Test
  void aNatsSubjectWithAWildcardIsRejected() {
    assertRejected(
        "kvbridge.sample.events.nats.subject must be dot-separated tokens of letters, digits, -"
            + " and _, at most 128 characters, got 'kv.*'",
        "kvbridge.sample.events.nats.subject=kv.*");
  }

  @Test
  void aNatsStreamNameWithADotIsRejected() {
    assertRejected(
        "kvbridge.sample.events.nats.stream must be 1 to 64 letters, digits, - and _, got 'a.b'",
        "kvbridge.sample.events.nats.stream=a.b");
  }

  @Test
  void aDecodeAloneShareAboveOneIsRejected() {
    assertRejected(
        "kvbridge.sample.router.decode-alone-share must be between 0 and 1, got 1.5",
        "kvbridge.sample.router.decode-alone-share=1.5");
  }

  @Test
  void aDisconnectCheckIntervalOfZeroIsRejected() {
    assertRejected(
        "kvbridge.sample.disconnect-check-interval must be a positive duration, got PT0S",
        "kvbridge.sample.disconnect-check-interval=0s");
  }

  @Test
  void aNodesOwnEngineSettingsOverrideTheSharedOnesAndInheritTheRest() {
    runner
        .withPropertyValues(
            "kvbridge.sample.engine.block-count=1024",
            "kvbridge.sample.engine.memory-order=block-major",
            "kvbridge.sample.prefill.engine.tp-degree=2",
            "kvbridge.sample.prefill.engine.tokens-per-block=16",
            "kvbridge.sample.decode.engine.tokens-per-block=32",
            "kvbridge.sample.decode.engine.prefix-cache-blocks=0")
        .run(
            context -> {
              SampleProperties properties = context.getBean(SampleProperties.class);
              EngineShape prefill = properties.prefillEngine();
              EngineShape decode = properties.decodeEngine();
              assertThat(prefill.tpDegree()).isEqualTo(2);
              assertThat(prefill.tokensPerBlock()).isEqualTo(16);
              assertThat(prefill.prefixCacheBlocks()).isEqualTo(512);
              assertThat(decode.tpDegree()).isEqualTo(1);
              assertThat(decode.tokensPerBlock()).isEqualTo(32);
              assertThat(decode.prefixCacheBlocks()).isZero();
              assertThat(prefill.blockCount()).isEqualTo(1024);
              assertThat(decode.model().order()).isEqualTo(KvLayout.MemoryOrder.BLOCK_MAJOR);
            });
  }

  @Test
  void aTpDegreeThatDoesNotSplitTheHeadsIsRejectedNamingTheProperty() {
    assertRejected(
        "kvbridge.sample.engine.tp-degree must be 1, 2, 4 or 8",
        "kvbridge.sample.engine.tp-degree=3");
  }

  @Test
  void aNodesOwnTpDegreeIsRejectedUnderItsOwnName() {
    assertRejected(
        "kvbridge.sample.decode.engine.tp-degree must be 1, 2, 4 or 8 (the ranks split the model's"
            + " KV heads equally, or hold each head on several ranks where there are more ranks"
            + " than heads), got 6",
        "kvbridge.sample.decode.engine.tp-degree=6");
  }

  @Test
  void blockSizesOfPrefillAndDecodeWithoutAnIntegerRatioAreRejectedNamingBoth() {
    assertRejected(
        "kvbridge.sample.engine.tokens-per-block (16) and"
            + " kvbridge.sample.decode.engine.tokens-per-block (24) must be multiples of one"
            + " another",
        "kvbridge.sample.decode.engine.tokens-per-block=24");
  }

  @Test
  void blockSizesAreNotComparedWhenOnlyOneNodeRunsHere() {
    runner
        .withPropertyValues(
            "kvbridge.sample.decode.enabled=false",
            "kvbridge.sample.decode.engine.tokens-per-block=24")
        .run(context -> assertThat(context).hasNotFailed());
  }

  @Test
  void aPrefixCacheLargerThanThePoolIsRejectedNamingTheProperty() {
    assertRejected(
        "kvbridge.sample.prefill.engine.prefix-cache-blocks must be 0 (off) to the pool's 64"
            + " blocks, got 65",
        "kvbridge.sample.prefill.engine.block-count=64",
        "kvbridge.sample.prefill.engine.prefix-cache-blocks=65");
  }

  @Test
  void theSharedPrefixCacheIsCheckedAgainstANodesOwnPool() {
    assertRejected(
        "kvbridge.sample.engine.prefix-cache-blocks (for"
            + " kvbridge.sample.decode.engine.block-count) must be 0 (off) to the pool's 100"
            + " blocks, got 512",
        "kvbridge.sample.decode.engine.block-count=100");
  }

  @Test
  void anUnknownMemoryOrderIsRejectedNamingThePropertyAndTheOrders() {
    assertRejected(
        "kvbridge.sample.engine.memory-order must be head-major or block-major, got 'row-major'",
        "kvbridge.sample.engine.memory-order=row-major");
  }

  @Test
  void aModelPresetGivesEveryEngineThatModelsKvShapeAtItsRealSize() {
    runner
        .withPropertyValues(
            "kvbridge.sample.engine.model=Llama-3.1-8B",
            "kvbridge.sample.engine.block-count=64",
            "kvbridge.sample.engine.prefix-cache-blocks=0",
            "kvbridge.sample.prefill.engine.tp-degree=2")
        .run(
            context -> {
              SampleProperties properties = context.getBean(SampleProperties.class);
              EngineShape prefill = properties.prefillEngine();
              assertThat(prefill.model().model()).isEqualTo("llama-3.1-8b");
              assertThat(prefill.bytesPerToken()).isEqualTo(128 * 1024);
              assertThat(prefill.rank(1).headStart()).isEqualTo(4);
              assertThat(properties.decodeEngine().model().layers()).isEqualTo(32);
            });
  }

  @Test
  void anUnknownModelIsRejectedNamingThePropertyAndThePresets() {
    assertRejected(
        "kvbridge.sample.engine.model must be toy or one of llama-3.1-8b, llama-3.1-70b,"
            + " qwen2.5-7b, mistral-7b, deepseek-v3, got 'gpt-2'",
        "kvbridge.sample.engine.model=gpt-2");
  }

  @Test
  void aPoolThatOneRegionCannotHoldIsRejectedNamingTheBlockCount() {
    // 4,096 blocks of 16 tokens of 128 KiB: 8 GiB in one cross-layer region.
    assertRejected(
        "kvbridge.sample.engine.block-count 4096 blocks of 16 tokens of llama-3.1-8b need"
            + " 8589934592 bytes per region of a rank",
        "kvbridge.sample.engine.model=llama-3.1-8b");
  }

  @Test
  void perLayerRegionsHoldAPoolThatOneCrossLayerRegionCannot() {
    // The same 8 GiB as 32 regions of 256 MiB, one per layer, as vLLM allocates them.
    runner
        .withPropertyValues(
            "kvbridge.sample.engine.model=llama-3.1-8b",
            "kvbridge.sample.engine.memory-placement=per-layer",
            "kvbridge.sample.engine.memory-order=block-major")
        .run(
            context -> {
              KvLayout model = context.getBean(SampleProperties.class).prefillEngine().model();
              assertThat(model.placement()).isEqualTo(KvLayout.Placement.PER_LAYER);
              assertThat(model.order()).isEqualTo(KvLayout.MemoryOrder.BLOCK_MAJOR);
              assertThat(model.regions()).isEqualTo(32);
              assertThat(model.regionBytes()).isEqualTo(256L << 20);
            });
  }

  @Test
  void aNodeMayKeepItsKvInAnotherMemoryShapeThanTheOther() {
    runner
        .withPropertyValues(
            "kvbridge.sample.engine.memory-placement=per-layer-plane",
            "kvbridge.sample.decode.engine.memory-placement=cross-layer",
            "kvbridge.sample.decode.engine.memory-order=block-major")
        .run(
            context -> {
              SampleProperties properties = context.getBean(SampleProperties.class);
              assertThat(properties.prefillEngine().model().placement())
                  .isEqualTo(KvLayout.Placement.PER_LAYER_PLANE);
              assertThat(properties.prefillEngine().model().order())
                  .isEqualTo(KvLayout.MemoryOrder.HEAD_MAJOR);
              assertThat(properties.decodeEngine().model().placement())
                  .isEqualTo(KvLayout.Placement.CROSS_LAYER);
              assertThat(properties.decodeEngine().model().order())
                  .isEqualTo(KvLayout.MemoryOrder.BLOCK_MAJOR);
            });
  }

  @Test
  void anUnknownPlacementIsRejectedNamingThePropertyAndThePlacements() {
    assertRejected(
        "kvbridge.sample.engine.memory-placement must be cross-layer, per-layer,"
            + " per-layer-block-first or per-layer-plane, got 'diagonal'",
        "kvbridge.sample.engine.memory-placement=diagonal");
    assertRejected(
        "kvbridge.sample.decode.engine.memory-placement must be cross-layer, per-layer,"
            + " per-layer-block-first or per-layer-plane, got 'diagonal'",
        "kvbridge.sample.decode.engine.memory-placement=diagonal");
  }

  @Test
  void aLatentEveryRankHoldsCountsWholeAgainstEachRanksMemory() {
    // 2,048 blocks of 16 tokens of 70,272 bytes: 2.3 GB on each of the 8 ranks, not an eighth.
    assertRejected(
        "kvbridge.sample.engine.block-count 2048 blocks of 16 tokens of deepseek-v3 need"
            + " 2302672896 bytes per region of a rank",
        "kvbridge.sample.engine.model=deepseek-v3",
        "kvbridge.sample.engine.block-count=2048",
        "kvbridge.sample.engine.prefix-cache-blocks=0",
        "kvbridge.sample.engine.tp-degree=8");
  }

  @Test
  void withMoreRanksThanHeadsEveryRankHoldsAHeadSeveralRanksShare() {
    runner
        .withPropertyValues(
            "kvbridge.sample.engine.model=deepseek-v3",
            "kvbridge.sample.engine.block-count=16",
            "kvbridge.sample.engine.prefix-cache-blocks=0",
            "kvbridge.sample.decode.engine.tp-degree=8")
        .run(
            context -> {
              EngineShape decode = context.getBean(SampleProperties.class).decodeEngine();
              assertThat(decode.tpDegree()).isEqualTo(8);
              assertThat(decode.rank(7).headStart()).isZero();
              assertThat(decode.rank(7).headCount()).isEqualTo(1);
            });
  }

  @Test
  void aDemoOfNoTurnsIsRejectedNamingTheProperty() {
    assertRejected("kvbridge.sample.demo.turns must be positive", "kvbridge.sample.demo.turns=0");
  }

  private void assertRejected(String message, String... properties) {
    runner
        .withPropertyValues(properties)
        .run(context -> assertThat(context).getFailure().rootCause().hasMessageContaining(message));
  }

  @Configuration(proxyBeanMethods = false)
  @EnableConfigurationProperties(SampleProperties.class)
  static class Bind {}
}
