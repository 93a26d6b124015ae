package io.kvbridge.runtime.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.lease.LeaseToken;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.transfer.MemoryKind;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class LoadChecksTest {

  private static final KvLayout LAYOUT = KvLayout.opaque("m", 16, 4, 2);
  private static final TokenIds PROMPT = TokenIds.of(new int[40]);

  private static TransferParams params(int tokens, List<Integer> blockIds, int ranks) {
    List<Integer> checksums = Collections.nCopies(blockIds.size(), 0);
    return new TransferParams(
        "prefill-0",
        1L,
        "req-1",
        blockIds,
        tokens,
        PROMPT.digest(Math.min(tokens, PROMPT.size())),
        LeaseToken.random().value(),
        0L,
        Optional.empty(),
        ChecksumScheme.CRC32C,
        Collections.nCopies(ranks, checksums));
  }

  private static ProducerPeer peer(KvLayout layout) {
    return new ProducerPeer(
        "prefill-0",
        "local://prefill-0",
        1L,
        List.of(new ProducerPeer.Rank("agent-0", layout, List.of(0L), 0, MemoryKind.DRAM)),
        null);
  }

  @Test
  void moreTokensThanThePromptIsAProblemNamingBoth() {
    assertThat(LoadChecks.shapeProblem(params(41, List.of(0, 1, 2), 1), PROMPT, LAYOUT))
        .hasValue("tokens 41 exceed the prompt's 40");
  }

  @Test
  void tokensThatExactlyFillThePoolAreAccepted() {
    assertThat(LoadChecks.shapeProblem(params(32, List.of(0, 1), 1), PROMPT, LAYOUT)).isEmpty();
  }

  @Test
  void oneTokenMoreThanThePoolHoldsIsAProblem() {
    assertThat(LoadChecks.shapeProblem(params(33, List.of(0, 1, 2), 1), PROMPT, LAYOUT))
        .hasValue("33 tokens need 3 blocks, more than this engine's pool of 2");
  }

  @Test
  void aBlockIdEqualToTheProducersPoolSizeIsOutsideIt() {
    KvLayout producer = KvLayout.opaque("m", 16, 4, 8);

    assertThat(
            LoadChecks.peerProblem(params(32, List.of(7, 8), 1), peer(producer), List.of(LAYOUT)))
        .hasValue("block id 8 is outside the producer's pool of 8 blocks");
    assertThat(
            LoadChecks.peerProblem(params(32, List.of(6, 7), 1), peer(producer), List.of(LAYOUT)))
        .isEmpty();
  }

  @Test
  void checksumListsMustMatchTheProducersRanks() {
    assertThat(LoadChecks.peerProblem(params(32, List.of(0, 1), 2), peer(LAYOUT), List.of(LAYOUT)))
        .hasValue("block_checksums has 2 lists; the producer has 1 ranks");
  }

  @Test
  void aProducerShapeTheConsumerCannotTranslateIsAProblem() {
    KvLayout otherModel = KvLayout.opaque("other", 16, 4, 2);

    assertThat(
            LoadChecks.peerProblem(params(32, List.of(0, 1), 1), peer(otherModel), List.of(LAYOUT)))
        .hasValue("producer shape cannot be translated: model m vs other");
  }
}
