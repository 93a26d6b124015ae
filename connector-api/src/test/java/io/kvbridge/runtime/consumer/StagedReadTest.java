package io.kvbridge.runtime.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.integrity.ChecksumInput;
import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.lease.LeaseToken;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.runtime.engine.ConnectorCounters;
import io.kvbridge.runtime.engine.Ranks;
import io.kvbridge.runtime.engine.StubMemory;
import io.kvbridge.runtime.engine.StubTransport;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.LoadFailure;
import io.kvbridge.spi.LoadSpec;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.transfer.KvRegions;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.wire.ProtocolMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A load's read is posted in stages of consecutive blocks, each its own READ: a stage's blocks are
 * checked as soon as its READ is done, while later stages still move, so that all that is left to
 * check after the last byte landed is the last stage; a stage that fails its check fails the load
 * at once and releases the stages still moving.
 */
class StagedReadTest {

  /**
   * Blocks of 4 tokens of 4 bytes; stages of at least 4 bytes: one block each (the last two stages
   * are a half and a quarter of the others, rounded to whole blocks).
   */
  private static final KvLayout LAYOUT = KvLayout.opaque("m", 4, 4, 16);

  private static final long MS = 1_000_000;

  private final long now = 1_000 * MS;
  private final StubTransport transport = new StubTransport();
  private final StubMemory memory = new StubMemory(0x1000, 256);
  private final ConnectorSettings settings =
      ConnectorSettings.builder("stub", "decode-0").clock(() -> now).build();
  private final Consumer consumer = consumer();

  private Consumer consumer() {
    Ranks ranks = new Ranks(List.of(transport));
    ranks.register(0, new KvRegions(LAYOUT, List.of(memory)));
    Consumer c =
        new Consumer(settings, ranks, new ConnectorCounters(new ConnectorObserver() {}), 4);
    c.start();
    return c;
  }

  @AfterEach
  void closeTheHandshakeThreads() {
    consumer.handshakes().close();
  }

  @Test
  void eachStageIsCheckedOnceItsReadIsDoneWhileLaterStagesStillMove() throws Exception {
    Load load = reading(-1);
    List<TransferHandle> stages = handles(load);
    assertThat(stages).hasSize(4);
    transport.statusOf.put(stages.get(0), TransferStatus.DONE);
    transport.statusOf.put(stages.get(1), TransferStatus.DONE);

    consumer.progress();

    assertThat(load.state()).isEqualTo(Load.State.READING);
    assertThat(load.uncheckedStage().orElseThrow().fromIndex()).isEqualTo(2);
    assertThat(transport.releasedHandles).isEmpty();

    stages.forEach(h -> transport.statusOf.put(h, TransferStatus.DONE));
    consumer.progress();

    assertThat(load.state()).isEqualTo(Load.State.AWAITING_REPLY);
    assertThat(transport.releasedHandles).containsExactlyInAnyOrderElementsOf(stages);
    assertThat(transport.sent).hasSize(1);
    assertThat(ProtocolMessage.decode(transport.sent.get(0).message()))
        .isInstanceOf(ProtocolMessage.Completion.class);
  }

  @Test
  void aStageWhoseBlockDoesNotMatchFailsTheLoadAtOnceAndReleasesTheStagesStillMoving() {
    Load load = reading(1);
    List<TransferHandle> stages = handles(load);
    transport.statusOf.put(stages.get(0), TransferStatus.DONE);
    transport.statusOf.put(stages.get(1), TransferStatus.DONE);

    consumer.progress();

    assertThat(consumer.drainFailures())
        .extracting(LoadFailure::reason)
        .singleElement()
        .asString()
        .startsWith("block 4 of producer prefill-0 rank 0 arrived with crc32c ")
        .endsWith("; not using the read");
    assertThat(transport.releasedHandles).containsExactlyInAnyOrderElementsOf(stages);
    assertThat(transport.sent).isEmpty();
  }

  @Test
  void aStageCheckedStaysCheckedWhenALaterStageFails() {
    Load load = reading(-1);
    List<TransferHandle> stages = handles(load);
    transport.statusOf.put(stages.get(0), TransferStatus.DONE);
    consumer.progress();
    transport.statusOf.put(stages.get(2), new TransferStatus.Failed("link down"));

    consumer.progress();

    assertThat(consumer.drainFailures())
        .extracting(LoadFailure::reason)
        .containsExactly("read failed: link down");
    assertThat(transport.releasedHandles).containsExactlyInAnyOrderElementsOf(stages);
  }

  /** The READs of {@code load}, one per stage, in stage order. */
  private static List<TransferHandle> handles(Load load) {
    List<TransferHandle> out = new ArrayList<>();
    load.reads().forEach(read -> out.add(read.handle()));
    return out;
  }

  /**
   * A load of four blocks (16 tokens) posted and reading; the lease's checksum of block {@code
   * corrupt} (-1: none) is not that of what lands.
   */
  private Load reading(int corrupt) {
    int zeros =
        ChecksumScheme.CRC32C.checksum(
            ChecksumInput.of(List.of(new ChecksumInput.Range(memory, 0, 16))));
    List<Integer> checksums = new ArrayList<>(List.of(zeros, zeros, zeros, zeros));
    if (corrupt >= 0) {
      checksums.set(corrupt, zeros ^ 1);
    }
    TransferParams params =
        new TransferParams(
            "prefill-0",
            1L,
            "p-1",
            List.of(3, 4, 5, 6),
            16,
            TokenIds.of(new int[16]).digest(16),
            LeaseToken.random().value(),
            now + 10_000 * MS,
            Optional.empty(),
            ChecksumScheme.CRC32C,
            List.of(checksums));
    Load load = new Load("d-1", params, 0, consumer.handshakes().epoch(), Long.MAX_VALUE);
    consumer.loads().add(load);
    TestLoads.advance(
        load,
        TestLoads.oneRankProducer(LAYOUT, 0x9000L),
        List.of(8, 9, 10, 11),
        Load.State.READY,
        Long.MAX_VALUE,
        now);
    consumer.post(new LoadSpec(load.requestId(), load.params(), load.localBlocks()));
    assertThat(load.state()).isEqualTo(Load.State.READING);
    return load;
  }
}
