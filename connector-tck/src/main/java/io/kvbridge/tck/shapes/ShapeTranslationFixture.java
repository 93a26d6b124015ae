package io.kvbridge.tck.shapes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.runtime.ConnectorRegistry;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.FinishDecision;
import io.kvbridge.spi.FinishedRequest;
import io.kvbridge.spi.FinishedTransfers;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.LoadFailure;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.ReadStaging;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.StartedRequest;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.tck.KvContent;
import io.kvbridge.tck.Prompts;
import io.kvbridge.time.ManualClock;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.KvRegions;
import io.kvbridge.transfer.Transport;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.function.UnaryOperator;
import org.awaitility.core.ThrowingRunnable;
import org.junit.jupiter.api.AfterEach;

/**
 * The engines every shape-translation test starts, each of some tensor parallelism, tokens per
 * block and memory order, through the connector under test; and the transfer of one request between
 * two of them. Every KV vector carries a value computed from its (layer, plane, head, token,
 * element), so a consumer rank can check, byte for byte, that each token of each of its heads
 * landed where its own layout puts it, that nothing it already held was written, and that nothing
 * past the prompt was. The suite's groups extend it.
 */
public abstract class ShapeTranslationFixture {

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

  /** The connector under test. */
  final ConnectorUnderTest underTest;

  /** Runs against {@code connector}, which starts every engine of the test. */
  protected ShapeTranslationFixture(ConnectorUnderTest connector) {
    this.underTest = Objects.requireNonNull(connector, "connector");
  }

  @AfterEach
  void stopEngines() {
    for (Engine engine : engines) {
      engine.close();
    }
  }

  /** The model's layout, whole, with {@code tokensPerBlock} and {@code blockCount}. */
  protected static KvLayout model(int tokensPerBlock, int blockCount, KvLayout.MemoryOrder order) {
    return model(tokensPerBlock, blockCount, order, LAYERS);
  }

  /** The model's layout with {@code layers} layers, whole. */
  protected static KvLayout model(
      int tokensPerBlock, int blockCount, KvLayout.MemoryOrder order, int layers) {
    return new KvLayout(
        MODEL,
        DTYPE_BYTES,
        layers,
        2,
        KV_HEADS,
        0,
        KV_HEADS,
        HEAD_DIM,
        tokensPerBlock,
        blockCount,
        order);
  }

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
        .atMost(underTest.patience())
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

  /**
   * Starts the prefill of {@code tokens} on {@code producer} as a streamed lease and has {@code
   * consumer} take it while no layer is computed yet: asked, allocated and started, both engines
   * stepped until the lease is confirmed.
   */
  protected Transfer startStreamed(Engine producer, Engine consumer, String requestId, int tokens) {
    TransferParams params = producer.startPrefill(requestId, tokens);
    assertThat(params.streamed()).isTrue();
    LoadMatch match = consumer.match(requestId, params, 0);
    assertThat(match).isInstanceOf(LoadMatch.Ready.class);
    List<Integer> blocks = consumer.blocksFor(tokens);
    consumer.connector.scheduler().afterAllocate(requestId, blocks);
    consumer.connector.worker().startLoad(consumer.connector.scheduler().buildStepMetadata());
    Transfer transfer =
        new Transfer(
            requestId, tokens, producer.seeds.get(requestId), match, params.blockIds(), blocks);
    settle(producer, consumer);
    return transfer;
  }

  /**
   * Steps both engines until nothing they exchange is left to handle: several rounds, as many as an
   * asynchronous transport needs to deliver what each round sent.
   */
  protected void settle(Engine producer, Engine consumer) {
    for (int i = 0; i < 20; i++) {
      producer.step();
      consumer.step();
      try {
        Thread.sleep(1);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while the engines settle", e);
      }
    }
  }

  /** Steps both engines until {@code request} is received or failed on {@code consumer}. */
  protected void awaitEnded(Engine producer, Engine consumer, String request) {
    stepUntil(
        producer,
        consumer,
        () ->
            assertThat(consumer.received.contains(request) || consumer.failed.containsKey(request))
                .as("%s ended on the consumer", request)
                .isTrue());
  }

  /**
   * Steps both engines (each at most once per poll; {@code consumer} may be {@code producer}, or
   * null) until {@code check} passes, within the connector's patience.
   */
  protected void stepUntil(Engine producer, Engine consumer, ThrowingRunnable check) {
    await()
        .atMost(underTest.patience())
        .pollInterval(Duration.ofMillis(1))
        .untilAsserted(
            () -> {
              producer.step();
              if (consumer != null && consumer != producer) {
                consumer.step();
              }
              check.run();
            });
  }

  /** The fewest prompt tokens whose lease the producers started next stream. */
  protected int streamingMinTokens = 1;

  /** How the engines started next read between ranks that split a token's heads differently. */
  protected ReadStaging staging = ReadStaging.DEFAULT;

  protected Engine start(String name, Role role, KvLayout model, int tp) {
    return start(name, role, model, tp, UnaryOperator.identity());
  }

  protected Engine start(
      String name, Role role, KvLayout model, int tp, UnaryOperator<Transport> decorator) {
    KvConnector connector = connector(name, role, tp, decorator);
    List<KvRegions> memories = new ArrayList<>();
    List<KvLayout> layouts = new ArrayList<>();
    for (int r = 0; r < tp; r++) {
      KvLayout layout = model.forRank(r, tp);
      List<KvMemory> regions = connector.worker(r).allocateKvRegions(layout);
      regions.forEach(region -> fill(region, layout.regionBytes(), UNTOUCHED));
      connector.worker(r).registerKvCache(regions, layout);
      memories.add(new KvRegions(layout, regions));
      layouts.add(layout);
    }
    Engine engine = new Engine(connector, memories, layouts);
    engines.add(engine);
    return engine;
  }

  KvConnector connector(String name, Role role, int tp, UnaryOperator<Transport> decorator) {
    ConnectorSettings settings =
        ConnectorSettings.builder(
                underTest.provider().type(),
                name + "-" + UUID.randomUUID().toString().substring(0, 8))
            .role(role)
            .tpDegree(tp)
            .leaseTerms(new LeaseTerms(Duration.ofSeconds(30), Duration.ofSeconds(120)))
            .safetyMargin(Duration.ofSeconds(2))
            .heartbeatInterval(Duration.ofSeconds(5))
            .replyTimeout(Duration.ofSeconds(5))
            .handshakeTimeout(Duration.ofSeconds(5))
            .handshakeAddress(underTest.handshakeAddress())
            .clock(clock)
            // Driven step by step on a manual clock: no progress thread between steps
            // (ProgressConformance runs one on the real clock).
            .progressInterval(Duration.ZERO)
            .streamingMinTokens(streamingMinTokens)
            .staging(staging)
            .properties(underTest.connectorProperties())
            .build();
    return ConnectorRegistry.of(List.of(underTest.provider())).create(settings, decorator);
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
    final List<KvRegions> memories;
    final List<KvLayout> layouts;
    final Set<String> received = new HashSet<>();
    final Set<String> sent = new HashSet<>();
    final Map<String, LoadFailure> failed = new HashMap<>();
    final Map<String, Long> seeds = new HashMap<>();
    // The streamed lease of each request whose prefill started: its blocks and tokens.
    final Map<String, TransferParams> streamed = new HashMap<>();
    private int nextBlock;

    Engine(KvConnector connector, List<KvRegions> memories, List<KvLayout> layouts) {
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
      List<Integer> blocks = freshBlocks(requestId, tokens, true);
      FinishDecision decision =
          connector
              .scheduler()
              .requestFinished(
                  new FinishedRequest(
                      requestId, blocks, Prompts.of(requestId, tokens), tokens, false, true));
      assertThat(decision.delayFree()).isTrue();
      return decision.params().orElseThrow();
    }

    /**
     * Starts the prefill of {@code tokens} of a prompt into fresh blocks holding whatever their
     * last user left, and asks the connector for a streamed lease on them: its parameters.
     */
    TransferParams startPrefill(String requestId, int tokens) {
      List<Integer> blocks = freshBlocks(requestId, tokens, false);
      TransferParams params =
          connector
              .scheduler()
              .requestStarted(
                  new StartedRequest(requestId, blocks, Prompts.of(requestId, tokens), tokens))
              .orElseThrow(
                  () -> new AssertionError("the lease of " + requestId + " is not streamed"));
      streamed.put(requestId, params);
      return params;
    }

    /**
     * Fresh blocks for {@code tokens} of request {@code requestId}'s prompt, on every rank: noise,
     * and, when {@code computed}, the prompt's KV over it (the rest of the last block stays noise).
     */
    private List<Integer> freshBlocks(String requestId, int tokens, boolean computed) {
      long seed = requestId.hashCode() * 0x9e3779b97f4a7c15L + tokens;
      seeds.put(requestId, seed);
      List<Integer> blocks = blocksFor(tokens);
      for (int r = 0; r < layouts.size(); r++) {
        KvLayout layout = layouts.get(r);
        for (int b = 0; b < blocks.size(); b++) {
          byte[] block = new byte[layout.blockBytes()];
          new Random(seed + b).nextBytes(block);
          if (computed) {
            int first = b * layout.tokensPerBlock();
            KvContent.write(
                layout, block, seed, first, Math.min(layout.tokensPerBlock(), tokens - first));
          }
          memories.get(r).writeBlock(blocks.get(b), block);
        }
      }
      return blocks;
    }

    /** The token of the streamed lease of {@code requestId}. */
    String leaseToken(String requestId) {
      return streamed.get(requestId).leaseToken();
    }

    /**
     * The forward pass writes layer {@code layer} of the prompt's KV into rank {@code rank}'s
     * blocks, and the rank's worker reports it saved.
     */
    void computeLayer(String requestId, int rank, int layer) {
      List<Integer> blocks = streamed.get(requestId).blockIds();
      long seed = seeds.get(requestId);
      int tokens = streamed.get(requestId).tokens();
      KvLayout layout = layouts.get(rank);
      KvRegions memory = memories.get(rank);
      for (int b = 0; b < blocks.size(); b++) {
        byte[] block = memory.readBlock(blocks.get(b));
        int first = b * layout.tokensPerBlock();
        int used = Math.min(layout.tokensPerBlock(), tokens - first);
        KvContent.writeLayers(layout, block, seed, first, used, layer, layer + 1);
        memory.writeBlock(blocks.get(b), block);
      }
      connector.worker(rank).layerSaved(requestId, layer);
    }

    /** {@link #computeLayer} on every rank. */
    void computeLayer(String requestId, int layer) {
      for (int r = 0; r < layouts.size(); r++) {
        computeLayer(requestId, r, layer);
      }
    }

    /** The engine finishes (or aborts) a request it streams: the connector's answer. */
    FinishDecision finishPrefill(String requestId, int tokens, boolean aborted) {
      return connector
          .scheduler()
          .requestFinished(
              new FinishedRequest(
                  requestId,
                  streamed.get(requestId).blockIds(),
                  Prompts.of(requestId, tokens),
                  tokens,
                  aborted,
                  true));
    }

    /** Asks about a load until the answer is not pending, stepping this engine and every other. */
    LoadMatch match(String requestId, TransferParams params, int localTokens) {
      TokenIds prompt = Prompts.of(params.requestId(), params.tokens());
      LoadMatch[] match = {
        connector.scheduler().matchRemote(requestId, prompt, localTokens, params)
      };
      await()
          .atMost(underTest.patience())
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
          int block = t.consumerBlocks().get(b);
          int used = Math.min(layout.tokensPerBlock(), t.tokens() - b * layout.tokensPerBlock());
          KvContent.forEachVector(
              layout,
              used,
              (layer, plane, head, token, offset) -> {
                int at = flat(layout, layout.offset(block, layer, plane, head, token));
                Arrays.fill(kv, at, at + layout.vectorBytes(), true);
              });
        }
        for (int i = 0; i < all.length; i++) {
          if (!kv[i] && all[i] != UNTOUCHED) {
            throw new AssertionError(
                "rank " + r + " byte " + i + " lies outside the prompt's KV and was written");
          }
        }
      }
    }

    /** Every byte of every token of layers {@code [fromLayer, toLayer)} is the request's KV. */
    void assertHoldsLayers(Transfer t, int fromLayer, int toLayer) {
      check(t, 0, t.tokens(), fromLayer, toLayer, true);
    }

    /** No byte of any token of layers {@code [fromLayer, toLayer)} was written. */
    void assertUntouchedLayers(Transfer t, int fromLayer, int toLayer) {
      check(t, 0, t.tokens(), fromLayer, toLayer, false);
    }

    private void check(Transfer t, int from, int to, boolean holds) {
      check(t, from, to, 0, layouts.get(0).layers(), holds);
    }

    private void check(Transfer t, int from, int to, int fromLayer, int toLayer, boolean holds) {
      for (int r = 0; r < layouts.size(); r++) {
        KvLayout layout = layouts.get(r);
        byte[] all = contents(r);
        for (int token = from; token < to; token++) {
          int block = t.consumerBlocks().get(token / layout.tokensPerBlock());
          for (int layer = fromLayer; layer < toLayer; layer++) {
            for (int plane = 0; plane < layout.planes(); plane++) {
              for (int head = layout.headStart();
                  head < layout.headStart() + layout.headCount();
                  head++) {
                int at =
                    flat(
                        layout,
                        layout.offset(block, layer, plane, head, token % layout.tokensPerBlock()));
                for (int e = 0; e < layout.vectorBytes(); e++) {
                  byte expected =
                      holds ? KvContent.value(t.seed(), layer, plane, head, token, e) : UNTOUCHED;
                  if (all[at + e] != expected) {
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
                            all[at + e],
                            holds ? "the request's KV " + expected : "untouched"));
                  }
                }
              }
            }
          }
        }
      }
    }

    /** Every byte of rank {@code rank}'s memory: its regions back to back ({@link #flat}). */
    private byte[] contents(int rank) {
      KvLayout layout = layouts.get(rank);
      byte[] all = new byte[Math.toIntExact(layout.regions() * layout.regionBytes())];
      List<KvMemory> regions = memories.get(rank).regions();
      for (int i = 0; i < regions.size(); i++) {
        regions
            .get(i)
            .read(
                0,
                ByteBuffer.wrap(
                    all, Math.toIntExact(i * layout.regionBytes()), (int) layout.regionBytes()));
      }
      return all;
    }

    /** Where rank offset {@code rankOffset} lies in {@link #contents}. */
    private static int flat(KvLayout layout, long rankOffset) {
      return Math.toIntExact(
          KvLayout.region(rankOffset) * layout.regionBytes() + KvLayout.inRegion(rankOffset));
    }

    void close() {
      connector.close();
      memories.forEach(m -> m.regions().forEach(KvMemory::close));
    }
  }
}
