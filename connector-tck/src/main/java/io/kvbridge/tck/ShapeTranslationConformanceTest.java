package io.kvbridge.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.lease.EndReason;
import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.runtime.ConnectorRegistry;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.FinishDecision;
import io.kvbridge.spi.FinishedRequest;
import io.kvbridge.spi.FinishedTransfers;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.LoadFailure;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.spi.TransportProvider;
import io.kvbridge.tck.faults.Faults;
import io.kvbridge.time.ManualClock;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.Transport;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Transfers between engines of different shapes over a connector's transport: tensor parallelism
 * (how many ranks split the KV heads), tokens per block and local prefix hits, in both memory
 * orders. Every KV vector carries a value computed from its (layer, plane, head, token, element),
 * so a consumer rank can check, byte for byte, that each token of each of its heads landed where
 * its own layout puts it, that nothing it already held was written, and that nothing past the
 * prompt was.
 *
 * <p>A connector module extends this class and says how to create its connector.
 */
public abstract class ShapeTranslationConformanceTest {

  /** The model every engine of the suite serves, unless a test says otherwise. */
  protected static final String MODEL = "conformance/shapes@1";

  protected static final int LAYERS = 2;
  protected static final int KV_HEADS = 4;
  protected static final int HEAD_DIM = 8;
  protected static final int DTYPE_BYTES = 2;

  /** The bytes a consumer's memory holds before anything is read into it. */
  private static final byte UNTOUCHED = (byte) 0x5a;

  private final ManualClock clock = new ManualClock();
  private final List<Engine> engines = new ArrayList<>();

  /** The provider of the connector type under test. */
  protected abstract TransportProvider provider();

  /** Where engines answer handshakes; {@code local} unless the transport spans processes. */
  protected String handshakeAddress() {
    return "local";
  }

  /** Connector-specific properties for an engine. */
  protected Map<String, String> connectorProperties() {
    return Map.of();
  }

  /** How long to wait for asynchronous progress before failing a test. */
  protected Duration patience() {
    return Duration.ofSeconds(30);
  }

  @AfterEach
  void stopEngines() {
    for (Engine engine : engines) {
      engine.close();
    }
  }

  /** The model's layout, whole, with {@code tokensPerBlock} and {@code blockCount}. */
  protected static KvLayout model(int tokensPerBlock, int blockCount, KvLayout.MemoryOrder order) {
    return new KvLayout(
        MODEL,
        DTYPE_BYTES,
        LAYERS,
        2,
        KV_HEADS,
        0,
        KV_HEADS,
        HEAD_DIM,
        tokensPerBlock,
        blockCount,
        order);
  }

  // ---------------------------------------------------------------- the matrix

  static Stream<Arguments> shapes() {
    List<Arguments> all = new ArrayList<>();
    for (KvLayout.MemoryOrder order : KvLayout.MemoryOrder.values()) {
      for (int p : new int[] {1, 2, 4}) {
        for (int d : new int[] {1, 2, 4}) {
          for (int[] blocks : new int[][] {{8, 4}, {8, 8}, {4, 8}}) {
            all.add(Arguments.of(order, p, blocks[0], d, blocks[1]));
          }
        }
      }
    }
    return all.stream();
  }

  /**
   * A prompt of three blocks of the larger size and a partly filled fourth moves byte-exact from
   * every shape to every other: producer and consumer TP in {1, 2, 4}, consumer blocks half, equal
   * to and twice the producer's, both memory orders.
   */
  @ParameterizedTest(name = "{0}: P TP{1} x {2} tokens -> D TP{3} x {4} tokens")
  @MethodSource("shapes")
  void everyTokenOfEveryHeadLandsWhereTheConsumersLayoutPutsIt(
      KvLayout.MemoryOrder order,
      int producerTp,
      int producerBlock,
      int consumerTp,
      int consumerBlock) {
    Engine producer = start("prefill", Role.PRODUCER, model(producerBlock, 32, order), producerTp);
    Engine consumer = start("decode", Role.CONSUMER, model(consumerBlock, 64, order), consumerTp);
    int tokens = 3 * Math.max(producerBlock, consumerBlock) + 3;

    Transfer t = transfer(producer, consumer, "r-1", tokens, 0);

    assertThat(t.match()).isEqualTo(new LoadMatch.Ready(0, tokens));
    assertThat(consumer.received).contains("r-1");
    consumer.assertHolds(t, 0, tokens);
    consumer.assertUntouchedOutside(t);
    await().atMost(patience()).until(() -> producer.step().sent.contains("r-1"));
    assertThat(producer.connector.status().producer().orElseThrow().leasesEnded())
        .containsEntry(EndReason.READ, 1L);
  }

  /** The bytes a read moves are the used bytes of the blocks it reads, nothing more. */
  @Test
  void theReadMovesOnlyTheUsedBytesOfThePartlyFilledLastBlock() {
    KvLayout.MemoryOrder order = KvLayout.MemoryOrder.HEAD_MAJOR;
    Engine producer = start("prefill", Role.PRODUCER, model(8, 32, order), 2);
    Engine consumer = start("decode", Role.CONSUMER, model(16, 64, order), 1);

    transfer(producer, consumer, "r-1", 19, 0);

    long bytesPerToken = (long) LAYERS * 2 * KV_HEADS * HEAD_DIM * DTYPE_BYTES;
    assertThat(consumer.connector.status().consumer().orElseThrow().bytesRead())
        .isEqualTo(19 * bytesPerToken);
  }

  // ---------------------------------------------------------------- local prefix hits

  static Stream<Arguments> prefixHits() {
    // (producer block, consumer block, tokens, local tokens, first token read)
    return Stream.of(
        Arguments.of(8, 8, 35, 0, 0),
        Arguments.of(8, 8, 35, 16, 16),
        Arguments.of(8, 8, 35, 20, 16),
        Arguments.of(8, 4, 35, 12, 8),
        Arguments.of(4, 8, 35, 24, 24),
        Arguments.of(8, 16, 35, 8, 0),
        Arguments.of(16, 8, 35, 32, 32));
  }

  /**
   * With part of the prompt held locally the consumer reads only what it lacks, from the local
   * prefix rounded down to whole blocks of both engines, and writes nothing before that.
   */
  @ParameterizedTest(name = "P x {0}, D x {1}: {2} tokens, {3} local -> read from {4}")
  @MethodSource("prefixHits")
  void aLocalPrefixIsNotReadAgainBeyondWholeBlocksOfBothEngines(
      int producerBlock, int consumerBlock, int tokens, int localTokens, int firstRead) {
    KvLayout.MemoryOrder order = KvLayout.MemoryOrder.HEAD_MAJOR;
    Engine producer = start("prefill", Role.PRODUCER, model(producerBlock, 32, order), 2);
    Engine consumer = start("decode", Role.CONSUMER, model(consumerBlock, 64, order), 2);

    Transfer t = transfer(producer, consumer, "r-1", tokens, localTokens);

    assertThat(t.match()).isEqualTo(new LoadMatch.Ready(firstRead, tokens - firstRead));
    consumer.assertHolds(t, firstRead, tokens);
    consumer.assertUntouched(t, 0, firstRead);
    consumer.assertUntouchedOutside(t);
  }

  /**
   * When the consumer holds every token of the lease, nothing is read and the producer frees the
   * lease at once.
   */
  @Test
  void aConsumerHoldingEveryTokenReadsNothingAndReleasesTheLease() {
    KvLayout.MemoryOrder order = KvLayout.MemoryOrder.BLOCK_MAJOR;
    Engine producer = start("prefill", Role.PRODUCER, model(8, 32, order), 2);
    Engine consumer = start("decode", Role.CONSUMER, model(16, 64, order), 4);
    TransferParams params = producer.prefill("r-1", 20);

    LoadMatch match = consumer.match("r-1", params, 20);

    assertThat(match).isEqualTo(new LoadMatch.Ready(20, 0));
    await().atMost(patience()).until(() -> producer.step().sent.contains("r-1"));
    assertThat(producer.connector.status().producer().orElseThrow().leasesEnded())
        .containsEntry(EndReason.RELEASED, 1L);
    assertThat(consumer.connector.status().consumer().orElseThrow().bytesRead()).isZero();
  }

  // ---------------------------------------------------------------- pairs that cannot translate

  /** What keeps two engines from exchanging KV, and a consumer layout that has it. */
  enum Mismatch {
    ANOTHER_MODEL,
    ANOTHER_HEAD_DIM,
    ANOTHER_MEMORY_ORDER,
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
        case ANOTHER_MEMORY_ORDER -> model(8, 64, KvLayout.MemoryOrder.BLOCK_MAJOR);
        case BLOCK_SIZES_WITHOUT_AN_INTEGER_RATIO -> base.withTokensPerBlock(12);
      };
    }

    /** How the producer's refusal names the field that differs: with the consumer's value. */
    String named() {
      return switch (this) {
        case ANOTHER_MODEL -> "model another/model@1 differs from the producer's";
        case ANOTHER_HEAD_DIM -> "head_dim 16 differs from the producer's";
        case ANOTHER_MEMORY_ORDER -> "memory order block_major differs from the producer's";
        case BLOCK_SIZES_WITHOUT_AN_INTEGER_RATIO ->
            "tokens_per_block 12 differs from the producer's: one must be a multiple of the other";
      };
    }

    /** The producer's value of that field, which the refusal must not quote. */
    String producersValue() {
      return switch (this) {
        case ANOTHER_MODEL -> MODEL;
        case ANOTHER_HEAD_DIM -> "vs " + HEAD_DIM;
        case ANOTHER_MEMORY_ORDER -> "head_major";
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

  /** Ranks whose heads do not split the model once are refused when the last one registers. */
  @Test
  void ranksThatDoNotSplitTheHeadsOnceAreRefusedAtRegistration() {
    KvLayout model = model(8, 16, KvLayout.MemoryOrder.HEAD_MAJOR);
    KvConnector connector = connector("decode", Role.CONSUMER, 2, UnaryOperator.identity());
    KvLayout first = model.forRank(0, 2);
    KvMemory m0 = connector.worker(0).allocateKvCache(first);
    connector.worker(0).registerKvCache(m0, first);
    KvMemory m1 = connector.worker(1).allocateKvCache(first);

    try {
      assertThatThrownBy(() -> connector.worker(1).registerKvCache(m1, first))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("holds heads from 0, expected from 2");
    } finally {
      connector.close();
      m0.close();
      m1.close();
    }
  }

  // ---------------------------------------------------------------- a rank fails mid-read

  /**
   * When one consumer rank's read fails, the load fails as a whole with every block it was lent
   * (the engine recomputes them or fails the request, by its policy); no completion is sent and the
   * producer's lease stays live.
   */
  @Test
  void oneRankFailingItsReadFailsTheWholeLoadWithItsBlocksAndTheLeaseStaysLive() {
    KvLayout.MemoryOrder order = KvLayout.MemoryOrder.HEAD_MAJOR;
    Faults faults = new Faults(7);
    Engine producer = start("prefill", Role.PRODUCER, model(8, 32, order), 2);
    Engine consumer =
        start(
            "decode",
            Role.CONSUMER,
            model(8, 64, order),
            2,
            transport ->
                transport.agentName().endsWith("-rank1") ? faults.decorate(transport) : transport);
    faults.failNextReads(1, "rank 1's link went down");

    Transfer t = transfer(producer, consumer, "r-1", 20, 0);

    LoadFailure failure = consumer.failed.get("r-1");
    assertThat(failure).isNotNull();
    assertThat(failure.reason()).contains("rank 1's link went down");
    assertThat(failure.localBlockIds()).isEqualTo(t.consumerBlocks());
    assertThat(consumer.received).doesNotContain("r-1");
    assertThat(producer.connector.status().producer().orElseThrow().liveLeases()).isEqualTo(1);
    assertThat(producer.step().sent).doesNotContain("r-1");
  }

  /**
   * A failed load after a local prefix hit names only the blocks it may have written: those below
   * its first token were never a destination and keep what the engine put there.
   */
  @Test
  void aFailedLoadAfterAPrefixHitNamesOnlyTheBlocksItMayHaveWritten() {
    KvLayout.MemoryOrder order = KvLayout.MemoryOrder.HEAD_MAJOR;
    Faults faults = new Faults(11);
    Engine producer = start("prefill", Role.PRODUCER, model(8, 32, order), 2);
    Engine consumer =
        start(
            "decode",
            Role.CONSUMER,
            model(8, 64, order),
            2,
            transport ->
                transport.agentName().endsWith("-rank1") ? faults.decorate(transport) : transport);
    faults.failNextReads(1, "rank 1's link went down");

    Transfer t = transfer(producer, consumer, "r-1", 35, 16);

    assertThat(t.match()).isEqualTo(new LoadMatch.Ready(16, 19));
    assertThat(consumer.failed.get("r-1").localBlockIds())
        .isEqualTo(t.consumerBlocks().subList(2, t.consumerBlocks().size()));
    consumer.assertUntouched(t, 0, 16);
  }

  // ---------------------------------------------------------------- the engines

  /** A transfer of one request: what the consumer was answered and where the KV went. */
  protected record Transfer(
      String requestId,
      int tokens,
      long seed,
      LoadMatch match,
      List<Integer> producerBlocks,
      List<Integer> consumerBlocks) {}

  /**
   * Prefills {@code tokens} on {@code producer}, then loads them on {@code consumer}, which holds
   * the first {@code localTokens} already, stepping both until the load is received or failed.
   */
  protected Transfer transfer(
      Engine producer, Engine consumer, String requestId, int tokens, int localTokens) {
    TransferParams params = producer.prefill(requestId, tokens);
    LoadMatch match = consumer.match(requestId, params, localTokens);
    long seed = producer.seeds.get(requestId);
    if (!(match instanceof LoadMatch.Ready ready) || ready.externalTokens() == 0) {
      return new Transfer(requestId, tokens, seed, match, params.blockIds(), List.of());
    }
    List<Integer> blocks = consumer.blocksFor(tokens);
    consumer.connector.scheduler().afterAllocate(requestId, blocks);
    consumer.connector.worker().startLoad(consumer.connector.scheduler().buildStepMetadata());
    await()
        .atMost(patience())
        .pollInterval(Duration.ofMillis(1))
        .until(
            () -> {
              producer.step();
              consumer.step();
              return consumer.received.contains(requestId)
                  || consumer.failed.containsKey(requestId);
            });
    return new Transfer(requestId, tokens, seed, match, params.blockIds(), blocks);
  }

  protected Engine start(String name, Role role, KvLayout model, int tp) {
    return start(name, role, model, tp, UnaryOperator.identity());
  }

  protected Engine start(
      String name, Role role, KvLayout model, int tp, UnaryOperator<Transport> decorator) {
    KvConnector connector = connector(name, role, tp, decorator);
    List<KvMemory> memories = new ArrayList<>();
    List<KvLayout> layouts = new ArrayList<>();
    for (int r = 0; r < tp; r++) {
      KvLayout layout = model.forRank(r, tp);
      KvMemory memory = connector.worker(r).allocateKvCache(layout);
      fill(memory, layout.totalBytes(), UNTOUCHED);
      connector.worker(r).registerKvCache(memory, layout);
      memories.add(memory);
      layouts.add(layout);
    }
    Engine engine = new Engine(connector, memories, layouts);
    engines.add(engine);
    return engine;
  }

  private KvConnector connector(
      String name, Role role, int tp, UnaryOperator<Transport> decorator) {
    ConnectorSettings settings =
        ConnectorSettings.builder(
                provider().type(), name + "-" + UUID.randomUUID().toString().substring(0, 8))
            .role(role)
            .tpDegree(tp)
            .leaseTerms(new LeaseTerms(Duration.ofSeconds(30), Duration.ofSeconds(120)))
            .safetyMargin(Duration.ofSeconds(2))
            .heartbeatInterval(Duration.ofSeconds(5))
            .replyTimeout(Duration.ofSeconds(5))
            .handshakeTimeout(Duration.ofSeconds(5))
            .handshakeAddress(handshakeAddress())
            .clock(clock)
            .properties(connectorProperties())
            .build();
    return ConnectorRegistry.of(List.of(provider())).create(settings, decorator);
  }

  private static void fill(KvMemory memory, long bytes, byte value) {
    byte[] chunk = new byte[(int) Math.min(bytes, 1 << 16)];
    Arrays.fill(chunk, value);
    for (long at = 0; at < bytes; at += chunk.length) {
      int n = (int) Math.min(chunk.length, bytes - at);
      memory.write(at, ByteBuffer.wrap(chunk, 0, n));
    }
  }

  /** One engine of the suite: its connector, each rank's memory and what its steps reported. */
  protected final class Engine {
    final KvConnector connector;
    final List<KvMemory> memories;
    final List<KvLayout> layouts;
    final Set<String> received = new HashSet<>();
    final Set<String> sent = new HashSet<>();
    final Map<String, LoadFailure> failed = new HashMap<>();
    final Map<String, Long> seeds = new HashMap<>();
    private int nextBlock;

    Engine(KvConnector connector, List<KvMemory> memories, List<KvLayout> layouts) {
      this.connector = connector;
      this.memories = memories;
      this.layouts = layouts;
    }

    /** One engine step: what getFinished reports is recorded. */
    Engine step() {
      FinishedTransfers finished = connector.worker().getFinished(Set.of());
      received.addAll(finished.doneReceiving());
      sent.addAll(finished.doneSending());
      finished.failedLoads().forEach(f -> failed.put(f.requestId(), f));
      return this;
    }

    /** Blocks for {@code tokens}, not in order, from a cursor that never hands one out twice. */
    List<Integer> blocksFor(int tokens) {
      int perBlock = layouts.get(0).tokensPerBlock();
      int count = (tokens + perBlock - 1) / perBlock;
      List<Integer> ids = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        ids.add(nextBlock + 2 * (count - 1 - i) + 1);
      }
      nextBlock += 2 * count + 1;
      return ids;
    }

    /**
     * Computes {@code tokens} of a prompt into fresh blocks of every rank, fills the rest of the
     * last block with noise, and finishes the request for a consumer: the transfer parameters.
     */
    TransferParams prefill(String requestId, int tokens) {
      long seed = requestId.hashCode() * 0x9e3779b97f4a7c15L + tokens;
      seeds.put(requestId, seed);
      List<Integer> blocks = blocksFor(tokens);
      for (int r = 0; r < layouts.size(); r++) {
        KvLayout layout = layouts.get(r);
        KvMemory memory = memories.get(r);
        for (int b = 0; b < blocks.size(); b++) {
          byte[] block = new byte[layout.blockBytes()];
          new Random(seed + b).nextBytes(block);
          int first = b * layout.tokensPerBlock();
          int used = Math.min(layout.tokensPerBlock(), tokens - first);
          KvContent.write(layout, block, seed, first, used);
          memory.write((long) blocks.get(b) * layout.blockBytes(), ByteBuffer.wrap(block));
        }
      }
      FinishDecision decision =
          connector
              .scheduler()
              .requestFinished(
                  new FinishedRequest(
                      requestId, blocks, Prompts.of(requestId, tokens), tokens, false, true));
      assertThat(decision.delayFree()).isTrue();
      return decision.params().orElseThrow();
    }

    /** Asks about a load until the answer is not pending, stepping this engine and every other. */
    LoadMatch match(String requestId, TransferParams params, int localTokens) {
      TokenIds prompt = Prompts.of(params.requestId(), params.tokens());
      LoadMatch[] match = {
        connector.scheduler().matchRemote(requestId, prompt, localTokens, params)
      };
      await()
          .atMost(patience())
          .pollInterval(Duration.ofMillis(1))
          .until(
              () -> {
                if (match[0] instanceof LoadMatch.Pending) {
                  engines.forEach(Engine::step);
                  match[0] =
                      connector.scheduler().matchRemote(requestId, prompt, localTokens, params);
                }
                return !(match[0] instanceof LoadMatch.Pending);
              });
      return match[0];
    }

    /** Every byte of tokens {@code [from, to)} of every head of every rank is the request's KV. */
    void assertHolds(Transfer t, int from, int to) {
      check(t, from, to, true);
    }

    /** No byte of tokens {@code [from, to)} was written. */
    void assertUntouched(Transfer t, int from, int to) {
      check(t, from, to, false);
    }

    /** No byte past the prompt's last token, in the request's blocks or elsewhere, was written. */
    void assertUntouchedOutside(Transfer t) {
      for (int r = 0; r < layouts.size(); r++) {
        KvLayout layout = layouts.get(r);
        byte[] all = contents(r);
        boolean[] kv = new boolean[all.length];
        for (int b = 0; b < t.consumerBlocks().size(); b++) {
          long base = (long) t.consumerBlocks().get(b) * layout.blockBytes();
          int used = Math.min(layout.tokensPerBlock(), t.tokens() - b * layout.tokensPerBlock());
          KvContent.forEachVector(
              layout,
              used,
              (layer, plane, head, token, offset) ->
                  Arrays.fill(
                      kv, (int) (base + offset), (int) (base + offset) + vectorBytes(), true));
        }
        for (int i = 0; i < all.length; i++) {
          if (!kv[i] && all[i] != UNTOUCHED) {
            throw new AssertionError(
                "rank " + r + " byte " + i + " lies outside the prompt's KV and was written");
          }
        }
      }
    }

    private void check(Transfer t, int from, int to, boolean holds) {
      for (int r = 0; r < layouts.size(); r++) {
        KvLayout layout = layouts.get(r);
        byte[] all = contents(r);
        for (int token = from; token < to; token++) {
          long base =
              (long) t.consumerBlocks().get(token / layout.tokensPerBlock()) * layout.blockBytes();
          for (int layer = 0; layer < LAYERS; layer++) {
            for (int plane = 0; plane < 2; plane++) {
              for (int head = layout.headStart();
                  head < layout.headStart() + layout.headCount();
                  head++) {
                long at =
                    base
                        + layout.offsetInBlock(layer, plane, head, token % layout.tokensPerBlock());
                for (int e = 0; e < vectorBytes(); e++) {
                  byte expected =
                      holds ? KvContent.value(t.seed(), layer, plane, head, token, e) : UNTOUCHED;
                  if (all[(int) at + e] != expected) {
                    throw new AssertionError(
                        String.format(
                            "rank %d, token %d, layer %d, plane %d, head %d, byte %d: %s, expected"
                                + " %s",
                            r,
                            token,
                            layer,
                            plane,
                            head,
                            e,
                            all[(int) at + e],
                            holds ? "the request's KV " + expected : "untouched"));
                  }
                }
              }
            }
          }
        }
      }
    }

    private byte[] contents(int rank) {
      KvLayout layout = layouts.get(rank);
      byte[] all = new byte[(int) layout.totalBytes()];
      memories.get(rank).read(0, ByteBuffer.wrap(all));
      return all;
    }

    void close() {
      connector.close();
      memories.forEach(KvMemory::close);
    }
  }

  private static int vectorBytes() {
    return HEAD_DIM * DTYPE_BYTES;
  }
}
