package io.kvbridge.tck.shapes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.transfer.KvMemory;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Pairs that cannot translate are refused at the handshake, naming what differs, before any block
 * is committed; ranks that do not split the model's heads once are refused at registration.
 */
public abstract class RefusedShapeConformance extends ShapeTranslationFixture {

  /** These tests, run against {@code connector}. */
  protected RefusedShapeConformance(ConnectorUnderTest connector) {
    super(connector);
  }

  /** What keeps two engines from exchanging KV, and a consumer layout that has it. */
  enum Mismatch {
    ANOTHER_MODEL,
    ANOTHER_HEAD_DIM,
    ANOTHER_DTYPE,
    BLOCK_SIZES_WITHOUT_AN_INTEGER_RATIO;

    KvLayout consumerModel() {
      KvLayout base = model(8, 64, KvLayout.MemoryOrder.HEAD_MAJOR);
      return switch (this) {
        case ANOTHER_MODEL ->
            new KvLayout(
                "another/model@1",
                DTYPE_BYTES,
                LAYERS,
                2,
                KV_HEADS,
                0,
                KV_HEADS,
                HEAD_DIM,
                8,
                64,
                KvLayout.MemoryOrder.HEAD_MAJOR);
        case ANOTHER_HEAD_DIM ->
            new KvLayout(
                MODEL,
                DTYPE_BYTES,
                LAYERS,
                2,
                KV_HEADS,
                0,
                KV_HEADS,
                HEAD_DIM * 2,
                8,
                64,
                KvLayout.MemoryOrder.HEAD_MAJOR);
        case ANOTHER_DTYPE ->
            new KvLayout(
                MODEL,
                DTYPE_BYTES * 2,
                LAYERS,
                2,
                KV_HEADS,
                0,
                KV_HEADS,
                HEAD_DIM,
                8,
                64,
                KvLayout.MemoryOrder.HEAD_MAJOR);
        case BLOCK_SIZES_WITHOUT_AN_INTEGER_RATIO -> base.withTokensPerBlock(12);
      };
    }

    /** How the producer's refusal names the field that differs: with the consumer's value. */
    String named() {
      return switch (this) {
        case ANOTHER_MODEL -> "model another/model@1 differs from the producer's";
        case ANOTHER_HEAD_DIM -> "head_dim 16 differs from the producer's";
        case ANOTHER_DTYPE -> "dtype_bytes " + DTYPE_BYTES * 2 + " differs from the producer's";
        case BLOCK_SIZES_WITHOUT_AN_INTEGER_RATIO ->
            "tokens_per_block 12 differs from the producer's: one must be a multiple of the other";
      };
    }

    /** The producer's value of that field, which the refusal must not quote. */
    String producersValue() {
      return switch (this) {
        case ANOTHER_MODEL -> MODEL;
        case ANOTHER_HEAD_DIM -> "vs " + HEAD_DIM;
        case ANOTHER_DTYPE -> "vs " + DTYPE_BYTES;
        case BLOCK_SIZES_WITHOUT_AN_INTEGER_RATIO -> "vs 8";
      };
    }
  }

  /**
   * A consumer whose shape cannot be translated from the producer's is refused at the handshake,
   * naming what differs with the consumer's own value and never the producer's; nothing is
   * allocated and the producer's lease stays live for a consumer that can read it.
   */
  @ParameterizedTest(name = "{0}")
  @EnumSource(Mismatch.class)
  void aPairThatCannotTranslateIsRefusedNamingWhatDiffersBeforeAnyBlockIsCommitted(
      Mismatch mismatch) {
    Engine producer =
        start("prefill", Role.PRODUCER, model(8, 32, KvLayout.MemoryOrder.HEAD_MAJOR), 2);
    Engine consumer = start("decode", Role.CONSUMER, mismatch.consumerModel(), 1);
    TransferParams params = producer.prefill("r-1", 20);

    LoadMatch match = consumer.match("r-1", params, 0);

    assertThat(match).isInstanceOf(LoadMatch.Unavailable.class);
    assertThat(((LoadMatch.Unavailable) match).reason())
        .contains(mismatch.named())
        .doesNotContain(mismatch.producersValue());
    assertThat(producer.connector.status().producer().orElseThrow().liveLeases()).isEqualTo(1);
    assertThat(consumer.connector.status().consumer().orElseThrow().loadsInFlight()).isZero();
  }

  /** Ranks that leave a head of the model unheld are refused when the last one registers. */
  @Test
  void ranksThatLeaveAHeadUnheldAreRefusedAtRegistration() {
    KvLayout model = model(8, 16, KvLayout.MemoryOrder.HEAD_MAJOR);
    KvConnector connector = connector("decode", Role.CONSUMER, 2, UnaryOperator.identity());
    KvLayout first = model.forRank(0, 2);
    KvMemory m0 = connector.worker(0).allocateKvCache(first);
    connector.worker(0).registerKvCache(m0, first);
    KvMemory m1 = connector.worker(1).allocateKvCache(first);

    try {
      assertThatThrownBy(() -> connector.worker(1).registerKvCache(m1, first))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("the ranks hold 2 of the model's 4 KV heads");
    } finally {
      connector.close();
      m0.close();
      m1.close();
    }
  }
}
