package io.kvbridge.tck.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.lease.EndReason;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.tck.Prompts;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Transfer parameters a consumer must not trust: blocks outside a pool, tokens that do not fit,
 * another producer, another prompt, a rewritten block list. A lease opens only its own blocks, for
 * its own prompt, once.
 */
public abstract class TransferParamsConformance extends PullProtocolFixture {

  /** These tests, run against {@code connector}. */
  protected TransferParamsConformance(ConnectorUnderTest connector) {
    super(connector);
  }

  @Test
  void blockIdOutsideTheProducersPoolIsRefusedBeforeAnyRead() {
    TransferParams honest = prefill("p-1", List.of(1));
    TransferParams forged =
        altered(honest, "block_ids", List.of(PRODUCER_LAYOUT.blockCount() + 3), "tokens", 4);

    load("d-1", forged, List.of(1));
    settle("d-1");

    assertThat(consumer.failed.get("d-1").reason()).contains("outside the producer's pool");
    assertThat(consumer.connector.status().rejected())
        .containsEntry(RejectedInput.MALFORMED_TRANSFER_PARAMS, 1L);
  }

  @Test
  void paramsNamingAnotherProducerThanTheOneAnsweringAreRefused() {
    TransferParams honest = prefill("p-1", List.of(1));
    TransferParams forged = altered(honest, "producer_engine_id", "impostor");

    load("d-1", forged, List.of(1));
    settle("d-1");

    assertThat(consumer.failed.get("d-1").reason()).contains("answers as");
  }

  @Test
  void paramsWhoseTokensDoNotFitTheBlocksAreRefusedBeforeAnyBlockIsCommitted() {
    TransferParams honest = prefill("p-1", List.of(1, 2));
    // The forger keeps the parameters self-consistent: the prompt digest covers the tokens named.
    TransferParams forged =
        altered(honest, "tokens", 4, "prompt_digest", Prompts.of("p-1", 4).digest(4));

    assertThat(confirm(consumer, "d-1", forged, Prompts.of("p-1", 4))).isFalse();

    assertThat(consumer.failed.get("d-1").reason()).contains("do not hold exactly 4 tokens");
    assertThat(consumer.connector.status().rejected())
        .containsEntry(RejectedInput.MALFORMED_TRANSFER_PARAMS, 1L);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
  }

  @Test
  void paramsWhoseHandshakeAddressDoesNotParseAreRefusedAtMatch() {
    TransferParams honest = prefill("p-1", List.of(1));
    TransferParams forged = altered(honest, "handshake_address", "udp://prefill:1");

    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                consumer
                    .connector
                    .scheduler()
                    .matchRemote("d-1", Prompts.of("p-1", forged.tokens()), 0, forged))
        .isInstanceOf(io.kvbridge.spi.InvalidTransferParamsException.class)
        .hasMessageContaining("handshake_address 'udp://prefill:1' is not an address");
    assertThat(consumer.connector.status().rejected())
        .containsEntry(RejectedInput.MALFORMED_TRANSFER_PARAMS, 1L);
    assertThat(consumer.consumerPart().loadsInFlight()).isZero();
  }

  @Test
  void blockListLargerThanTheConsumersPoolIsRefusedAtMatch() {
    TransferParams honest = prefill("p-1", List.of(1));
    int tooMany = CONSUMER_LAYOUT.blockCount() + 1;
    TransferParams forged =
        altered(
            honest,
            "block_ids",
            java.util.Collections.nCopies(tooMany, 1),
            "block_checksums",
            List.of("0".repeat(8 * tooMany)),
            "tokens",
            tooMany * CONSUMER_LAYOUT.tokensPerBlock());

    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                consumer
                    .connector
                    .scheduler()
                    .matchRemote("d-1", Prompts.of("p-1", forged.tokens()), 0, forged))
        .hasMessageContaining("more than this engine's pool");
    assertThat(consumer.consumerPart().loadsInFlight()).isZero();
  }

  /** Ways a router or an attacker may rewrite the block list of genuine parameters. */
  enum BlockForgery {
    ANOTHER_LIVE_LEASES_BLOCKS,
    FREE_BLOCKS,
    OWN_BLOCKS_REVERSED,
    OWN_BLOCKS_SHIFTED_BY_ONE,
    OWN_BLOCK_REPEATED;

    List<Integer> apply(List<Integer> own, List<Integer> otherLease) {
      return switch (this) {
        case ANOTHER_LIVE_LEASES_BLOCKS -> otherLease;
        case FREE_BLOCKS -> List.of(29, 30, 31);
        case OWN_BLOCKS_REVERSED -> List.of(own.get(2), own.get(1), own.get(0));
        case OWN_BLOCKS_SHIFTED_BY_ONE -> own.stream().map(b -> b + 1).toList();
        case OWN_BLOCK_REPEATED -> List.of(own.get(0), own.get(0), own.get(0));
      };
    }
  }

  /**
   * The forger also rewrites the checksums to match the blocks it makes D read, so D's content
   * check passes and only P's read digest stands between the token and the other blocks.
   */
  @ParameterizedTest(name = "{0}")
  @EnumSource(BlockForgery.class)
  void forgedBlockListIsRefusedByTheProducerAndTheLeaseStaysLive(BlockForgery forgery) {
    producer.fill(List.of(3, 7, 11, 20, 21, 22, 29, 30, 31, 4, 8, 12));
    TransferParams honest = prefill("p-1", List.of(3, 7, 11));
    TransferParams otherLease = prefill("p-2", List.of(20, 21, 22));
    List<Integer> forgedIds = forgery.apply(honest.blockIds(), otherLease.blockIds());
    TransferParams forged =
        altered(honest, "block_ids", forgedIds, "block_checksums", producerChecksumsHex(forgedIds));

    load("d-1", forged, List.of(40, 41, 42));
    settle("d-1");

    assertThat(consumer.received).doesNotContain("d-1");
    assertThat(consumer.failed.get("d-1").reason()).contains("WRONG_BLOCKS");
    awaitRejected(producer, RejectedInput.WRONG_BLOCKS);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(2);
    assertThat(producer.drain().sent).isEmpty();
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.READ, 0L);
  }

  @Test
  void genuineParametersStillLoadAfterAForgedBlockListWasRefused() {
    Map<Integer, byte[]> written = producer.fill(List.of(3, 7, 11));
    TransferParams honest = prefill("p-1", List.of(3, 7, 11));
    List<Integer> reversed = List.of(11, 7, 3);
    load(
        "d-1",
        altered(honest, "block_ids", reversed, "block_checksums", producerChecksumsHex(reversed)),
        List.of(40, 41, 42));
    settle("d-1");

    load("d-2", honest, List.of(50, 51, 52));
    settle("d-2");

    assertThat(consumer.received).contains("d-2");
    assertThat(consumer.block(50)).isEqualTo(written.get(3));
    assertThat(consumer.block(52)).isEqualTo(written.get(11));
    awaitTrue(() -> producer.drain().sent.contains("p-1"));
    assertThat(producer.producerPart().leasesEnded()).containsEntry(EndReason.READ, 1L);
  }

  @Test
  void genuineParametersWithAnotherPromptOfTheSameLengthAreRefusedAtMatch() {
    TransferParams params = prefill("p-1", List.of(1, 2));

    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                consumer
                    .connector
                    .scheduler()
                    .matchRemote("d-1", Prompts.of("another prompt", params.tokens()), 0, params))
        .isInstanceOf(io.kvbridge.spi.InvalidTransferParamsException.class)
        .hasMessageContaining("another prompt");
    assertThat(consumer.connector.status().rejected())
        .containsEntry(RejectedInput.PROMPT_MISMATCH, 1L);
    assertThat(consumer.consumerPart().loadsInFlight()).isZero();
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
  }

  @Test
  void promptDigestRewrittenForAnotherPromptIsRefusedByTheProducer() {
    TransferParams params = prefill("p-1", List.of(1, 2));
    var otherPrompt = Prompts.of("another prompt", params.tokens());
    TransferParams forged = altered(params, "prompt_digest", otherPrompt.digest(params.tokens()));

    load(consumer, "d-1", forged, otherPrompt, List.of(5, 6));
    settle("d-1");

    assertThat(consumer.received).doesNotContain("d-1");
    awaitRejected(producer, RejectedInput.WRONG_BLOCKS);
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
  }

  @Test
  void blockWhoseContentChangedAfterTheGrantFailsTheLoadBeforeAnyCompletion() {
    producer.fill(List.of(1, 2));
    TransferParams params = prefill("p-1", List.of(1, 2));
    producer.fill(List.of(2)); // overwritten while the lease holds it

    load("d-1", params, List.of(5, 6));
    settle("d-1");

    assertThat(consumer.failed.get("d-1").reason()).contains("crc32c");
    assertThat(consumer.connector.status().rejected())
        .containsEntry(RejectedInput.CHECKSUM_MISMATCH, 1L);
    assertThat(consumer.consumerPart().readsCompleted()).isZero();
    assertThat(producer.producerPart().liveLeases()).isEqualTo(1);
  }

  @Test
  void oneLeaseLoadedUnderTwoRequestsIsRefusedTheSecondTime() {
    establishPeer();
    TransferParams params = prefill("p-1", List.of(1));
    TokenIds prompt = Prompts.of("p-1", params.tokens());
    assertThat(consumer.connector.scheduler().matchRemote("d-1", prompt, 0, params))
        .isEqualTo(new LoadMatch.Ready(0, params.tokens()));

    assertThatThrownBy(() -> consumer.connector.scheduler().matchRemote("d-2", prompt, 0, params))
        .isInstanceOf(io.kvbridge.spi.InvalidTransferParamsException.class)
        .hasMessageContaining("is already being loaded on this engine");
    assertThat(consumer.connector.status().rejected())
        .containsEntry(RejectedInput.MALFORMED_TRANSFER_PARAMS, 1L);
  }

  /**
   * The checksums P's current memory gives {@code blocks}, in transfer-parameter form (one string,
   * the producer has one rank).
   */
  protected List<String> producerChecksumsHex(List<Integer> blocks) {
    StringBuilder hex = new StringBuilder();
    for (int block : blocks) {
      int crc =
          ChecksumScheme.CRC32C.checksum(
              producer.memory,
              (long) block * PRODUCER_LAYOUT.blockBytes(),
              PRODUCER_LAYOUT.blockBytes());
      hex.append(java.util.HexFormat.of().toHexDigits(crc));
    }
    return List.of(hex.toString());
  }
}
