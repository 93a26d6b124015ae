package io.kvbridge.benchmarks.ttft;

import io.kvbridge.benchmarks.BenchConnectors;
import io.kvbridge.benchmarks.transfer.RealSizeShape;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.FinishDecision;
import io.kvbridge.spi.FinishedRequest;
import io.kvbridge.spi.FinishedTransfers;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.LoadFailure;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.StartedRequest;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.KvRegions;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.IntStream;

/**
 * Time to first token, with the prefill streamed layer by layer and with the whole request read
 * after the prefill: Llama-3.1-8B's KV ({@link RealSizeShape.Model#LLAMA_3_1_8B}: 32 layers, a
 * tensor per layer, 128 KiB per token), one tensor-parallel rank on each side, one request in
 * flight, on one connector type per run.
 *
 * <p>Two engines, each a connector driven as an engine drives it:
 *
 * <ul>
 *   <li><b>P</b> (a thread of its own) computes each layer of the prompt for {@link #PREFILL_COST}
 *       per token, writes that layer's KV into its per-layer tensors and, when the request is
 *       streamed, reports the layer saved ({@code layerSaved}). A streamed request's lease is
 *       granted as the prefill starts ({@code requestStarted}) and its parameters go to D at once;
 *       a request not streamed is leased when its prefill finishes ({@code requestFinished}). P
 *       then steps every {@link #STEP} until its lease ends.
 *   <li><b>D</b> (the calling thread) steps every {@link #STEP}; from the step after the parameters
 *       reach it, it asks for the load ({@code matchRemote}, again each step while the lease is
 *       being confirmed), hands it blocks, and reports the time to first token at the step that
 *       learns the load received ({@code getFinished}): its first decode step would start there
 *       (the benchmark gives decoding no cost of its own).
 * </ul>
 *
 * <p>The request's time to first token runs from its arrival at P (the router's hand-off) to that
 * step; its prefill time from the same arrival to the last layer written and saved; the exposed
 * transfer is their difference. Modes: {@link Mode}. After each mode and prompt length D's memory
 * of the request is compared with P's, byte for byte.
 *
 * <p>Usage: {@code TtftRun <out.jsonl> <fake|nixl> [tokens,...]}; appends one JSON object per mode
 * and prompt length. The {@code nixl} connector needs {@code -Dkvbridge.nixl.home} and loopback UCX
 * transports, as {@code benchmarks/run.sh} gives it.
 */
public final class TtftRun {

  /** The model's KV shape, as the real-size benchmark reads it. */
  public static final RealSizeShape.Model MODEL = RealSizeShape.Model.LLAMA_3_1_8B;

  /** Tokens per block on both sides. */
  public static final int TOKENS_PER_BLOCK = 16;

  /**
   * What computing one layer of one prompt token costs P: 32 layers at 2 µs is 64 µs a token, a
   * prefill of about 15,600 tokens a second, of the order of one data-center GPU's prefill of an 8B
   * model. It makes one layer's compute take about as long as one layer's transfer on the fake
   * connector here, which is where streaming pays most and where its per-layer costs show.
   */
  public static final Duration PREFILL_COST = Duration.ofNanos(2_000);

  /** Both engines' step interval: an engine stepping while it decodes small batches. */
  public static final Duration STEP = Duration.ofMillis(1);

  /** The prompt lengths measured by default. */
  public static final List<Integer> TOKENS = List.of(128, 512, 1024, 4096, 32768);

  /** How long one request may take before the run stops as failed. */
  private static final long TIMEOUT_SECONDS = 120;

  /** Below a spin: parking overshoots by tens of microseconds. */
  private static final long SPIN_NANOS = 100_000;

  /** How a request reaches D. */
  public enum Mode {
    /** P leases the request when its prefill finishes; D reads it all after that. */
    WHOLE,
    /** P streams every request ({@code kvbridge.streaming.min-tokens} 1). */
    STREAMED,
    /** P streams requests of at least the default {@code kvbridge.streaming.min-tokens}. */
    DEFAULT
  }

  /** The settings above, by name, for the report. */
  public static Map<String, Object> settings() {
    return Map.of(
        "model",
        MODEL.kv().name(),
        "placement",
        MODEL.placement().name(),
        "layers",
        MODEL.kv().layers(),
        "bytesPerToken",
        MODEL.kv().bytesPerToken(),
        "tokensPerBlock",
        TOKENS_PER_BLOCK,
        "prefillCostNanos",
        PREFILL_COST.toNanos(),
        "stepMicros",
        STEP.toNanos() / 1_000,
        "streamingMinTokens",
        ConnectorSettings.DEFAULT_STREAMING_MIN_TOKENS);
  }

  /** The longest prompt the {@link Mode#DEFAULT} mode is measured at. */
  public static final int DEFAULT_MODE_MAX_TOKENS = 1024;

  /** Warm-up requests, then measured ones, per mode and prompt length. */
  static int[] samples(int tokens) {
    if (tokens <= 512) {
      return new int[] {5, 60};
    }
    if (tokens <= 1024) {
      return new int[] {3, 30};
    }
    if (tokens <= 4096) {
      return new int[] {2, 15};
    }
    return new int[] {1, 5};
  }

  /** Runs the modes on one connector type and appends their figures. */
  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      throw new IllegalArgumentException("usage: TtftRun <out.jsonl> <fake|nixl> [tokens,...]");
    }
    Path out = Path.of(args[0]);
    String connector = args[1];
    List<Integer> tokens =
        args.length > 2
            ? Arrays.stream(args[2].split(",")).map(Integer::parseInt).toList()
            : TOKENS;
    int longest = tokens.stream().mapToInt(t -> t).max().orElseThrow();
    int longestDefault =
        tokens.stream().mapToInt(t -> t).filter(t -> t <= DEFAULT_MODE_MAX_TOKENS).max().orElse(0);
    // WHOLE and STREAMED share one pair: whether a request streams is the engine's choice (it calls
    // requestStarted or not). DEFAULT needs P's default threshold: a pair of its own. The modes'
    // requests alternate, so that whatever drifts during the run weighs on each alike.
    try (Pair streaming = new Pair(connector, 1, longest);
        Pair defaults =
            longestDefault == 0
                ? null
                : new Pair(
                    connector, ConnectorSettings.DEFAULT_STREAMING_MIN_TOKENS, longestDefault)) {
      for (int t : tokens) {
        List<Mode> modes =
            t <= DEFAULT_MODE_MAX_TOKENS
                ? List.of(Mode.values())
                : List.of(Mode.WHOLE, Mode.STREAMED);
        Map<Mode, Samples> samples = new EnumMap<>(Mode.class);
        int[] counts = samples(t);
        for (int i = -counts[0]; i < counts[1]; i++) {
          for (Mode mode : modes) {
            Pair pair = mode == Mode.DEFAULT ? defaults : streaming;
            Sample sample = pair.request(t, mode != Mode.WHOLE);
            if (i == 0) {
              pair.checkLastRequest(mode, t);
            }
            if (i >= 0) {
              samples.computeIfAbsent(mode, m -> new Samples(counts[1])).add(sample);
            }
          }
        }
        for (Mode mode : modes) {
          String line = samples.get(mode).json(connector, mode, t);
          System.err.print("[ttft] " + line);
          Files.writeString(
              out,
              line,
              StandardCharsets.UTF_8,
              StandardOpenOption.CREATE,
              StandardOpenOption.APPEND);
        }
      }
    }
  }

  /**
   * What the measured requests of one mode and prompt length took, in nanoseconds: the time to
   * first token and the prefill (both from the request's arrival), D's READ from its first post to
   * P's ACK, and the exposed transfer's two parts: from the prefill's end to D learning of P's ACK,
   * and from there to D's step that reported the load received.
   */
  static final class Samples {
    private final long[] ttft;
    private final long[] prefill;
    private final long[] transfer;
    private final long[] prefillToAck;
    private final long[] ackToStep;
    private int count;
    private long streamed;

    Samples(int size) {
      ttft = new long[size];
      prefill = new long[size];
      transfer = new long[size];
      prefillToAck = new long[size];
      ackToStep = new long[size];
    }

    void add(Sample s) {
      ttft[count] = s.ttftNanos();
      prefill[count] = s.prefillNanos();
      transfer[count] = s.transferNanos();
      prefillToAck[count] = s.ackedAt() - s.prefillNanos();
      ackToStep[count] = s.ttftNanos() - s.ackedAt();
      streamed += s.streamed() ? 1 : 0;
      count++;
    }

    String json(String connector, Mode mode, int tokens) {
      return String.format(
          Locale.ROOT,
          "{\"connector\": \"%s\", \"mode\": \"%s\", \"tokens\": %d, \"bytes\": %d,"
              + " \"requests\": %d, \"streamed\": %d, \"ttftNanos\": %s, \"prefillNanos\": %s,"
              + " \"transferNanos\": %s, \"prefillToAckNanos\": %s, \"ackToStepNanos\": %s}%n",
          connector,
          mode,
          tokens,
          (long) tokens * MODEL.kv().bytesPerToken(),
          count,
          streamed,
          Arrays.toString(ttft),
          Arrays.toString(prefill),
          Arrays.toString(transfer),
          Arrays.toString(prefillToAck),
          Arrays.toString(ackToStep));
    }
  }

  /** One request's times, each but the READ's from its arrival at P. */
  record Sample(
      long ttftNanos, long prefillNanos, long transferNanos, long ackedAt, boolean streamed) {}

  /** A prefill and a decode connector of one type and their per-layer tensors. */
  static final class Pair implements AutoCloseable {

    private final KvLayout layout;
    private final KvConnector prefill;
    private final KvConnector decode;
    private final List<KvMemory> prefillMemory;
    private final List<KvMemory> decodeMemory;
    private final KvRegions prefillRegions;
    private final KvRegions decodeRegions;
    private final ByteBuffer source;
    private final ExecutorService prefillThread =
        Executors.newSingleThreadExecutor(r -> new Thread(r, "ttft-prefill"));
    private final Map<String, Long> transferNanos = new ConcurrentHashMap<>();
    private final Map<String, Long> ackedAt = new ConcurrentHashMap<>();
    private long next;

    /** P streams requests of at least {@code minTokens} tokens; both hold {@code maxTokens}. */
    Pair(String type, int minTokens, int maxTokens) {
      int blocks = maxTokens / TOKENS_PER_BLOCK;
      this.layout =
          MODEL
              .kv()
              .layout(TOKENS_PER_BLOCK, blocks, RealSizeShape.ORDER)
              .withMemory(RealSizeShape.ORDER, MODEL.placement());
      String deployment = "ttft-" + UUID.randomUUID();
      ConnectorObserver reads =
          new ConnectorObserver() {
            @Override
            public void transferCompleted(String requestId, long bytes, long nanos) {
              ackedAt.put(requestId, System.nanoTime());
              transferNanos.put(requestId, nanos);
            }
          };
      prefill =
          connector(type, deployment, "prefill", Role.PRODUCER, minTokens, ConnectorObserver.NONE);
      decode = connector(type, deployment, "decode", Role.CONSUMER, minTokens, reads);
      prefillMemory = prefill.worker().allocateKvRegions(layout);
      prefill.worker().registerKvCache(prefillMemory, layout);
      decodeMemory = decode.worker().allocateKvRegions(layout);
      decode.worker().registerKvCache(decodeMemory, layout);
      prefillRegions = new KvRegions(layout, prefillMemory);
      decodeRegions = new KvRegions(layout, decodeMemory);
      // What P writes: a request's slabs are windows of this at a per-request offset, so no two
      // requests in a row leave the same bytes behind.
      int slab = layout.slabBytes();
      byte[] noise = new byte[4 * slab];
      new Random(42).nextBytes(noise);
      source = ByteBuffer.wrap(noise);
    }

    /** Fails the run if D's copy of the last request, one of {@code tokens} tokens, is not P's. */
    void checkLastRequest(Mode mode, int tokens) {
      Optional<String> difference = firstDifference(tokens);
      if (difference.isPresent()) {
        throw new IllegalStateException(
            mode + ", " + tokens + " tokens: D's KV differs from P's at " + difference.get());
      }
    }

    /**
     * One request: P computes it while D waits for its parameters, then loads it. An engine that
     * {@code streams} asks for the lease as the prefill starts (the connector may still decline).
     */
    Sample request(int tokens, boolean streams) throws Exception {
      String id = "ttft-" + next;
      long seed = next++;
      List<Integer> blocks = IntStream.range(0, tokens / TOKENS_PER_BLOCK).boxed().toList();
      int[] ids = new int[tokens];
      for (int i = 0; i < ids.length; i++) {
        ids[i] = (int) ((seed * 7919 + i) % 32_000);
      }
      TokenIds prompt = TokenIds.of(ids);
      CompletableFuture<TransferParams> params = new CompletableFuture<>();
      long start = System.nanoTime();
      Future<Prefilled> p =
          prefillThread.submit(
              () -> prefill(id, blocks, prompt, tokens, seed, streams, start, params));
      long ttft = decode(id, blocks, prompt, params, start);
      Prefilled done = p.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
      Long transfer = transferNanos.remove(id);
      Long acked = ackedAt.remove(id);
      if (transfer == null || acked == null) {
        throw new IllegalStateException("D received " + id + " but reported no completed read");
      }
      return new Sample(ttft, done.nanos, transfer, acked - start, done.streamed);
    }

    private record Prefilled(long nanos, boolean streamed) {}

    /** P: lease, compute layer by layer, finish, and step until the lease ends. */
    private Prefilled prefill(
        String id,
        List<Integer> blocks,
        TokenIds prompt,
        int tokens,
        long seed,
        boolean streams,
        long start,
        CompletableFuture<TransferParams> params) {
      Optional<TransferParams> early =
          !streams
              ? Optional.empty()
              : prefill.scheduler().requestStarted(new StartedRequest(id, blocks, prompt, tokens));
      early.ifPresent(params::complete);
      for (int layer = 0; layer < layout.layers(); layer++) {
        spend(PREFILL_COST.toNanos() * tokens);
        writeLayer(blocks, tokens, seed, layer);
        if (early.isPresent()) {
          prefill.worker().layerSaved(id, layer);
        }
      }
      long prefillNanos = System.nanoTime() - start;
      FinishDecision decision =
          prefill
              .scheduler()
              .requestFinished(new FinishedRequest(id, blocks, prompt, tokens, false, true));
      if (early.isEmpty()) {
        params.complete(
            decision
                .params()
                .orElseThrow(() -> new IllegalStateException("P gave " + id + " no lease")));
      }
      if (decision.delayFree()) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
        while (!prefill.worker().getFinished(Set.of()).doneSending().contains(id)) {
          if (System.nanoTime() > deadline) {
            throw new IllegalStateException("P's lease of " + id + " did not end");
          }
          LockSupport.parkNanos(STEP.toNanos());
        }
      }
      return new Prefilled(prefillNanos, early.isPresent());
    }

    /** Writes layer {@code layer} of the request's KV into P's tensors. */
    private void writeLayer(List<Integer> blocks, int tokens, long seed, int layer) {
      int shift = (int) (seed % (2 * layout.slabBytes()));
      for (int i = 0; i < blocks.size(); i++) {
        int used = Math.min(TOKENS_PER_BLOCK, tokens - i * TOKENS_PER_BLOCK);
        layout.forEachUsedRange(
            blocks.get(i),
            used,
            layer,
            layer + 1,
            (offset, length) ->
                prefillRegions.write(
                    offset,
                    source.duplicate().position(shift).limit(shift + Math.toIntExact(length))));
      }
    }

    /** D: steps until the load of {@code id} is received; answers its time to first token. */
    private long decode(
        String id,
        List<Integer> blocks,
        TokenIds prompt,
        CompletableFuture<TransferParams> params,
        long start) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
      boolean allocated = false;
      while (true) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("D did not receive " + id + " in time");
        }
        if (!allocated && params.isDone()) {
          LoadMatch match = decode.scheduler().matchRemote(id, prompt, 0, params.join());
          if (match instanceof LoadMatch.Unavailable u) {
            throw new IllegalStateException("D cannot load " + id + ": " + u.reason());
          }
          if (match instanceof LoadMatch.Ready) {
            decode.scheduler().afterAllocate(id, blocks);
            allocated = true;
          }
        }
        decode.worker().startLoad(decode.scheduler().buildStepMetadata());
        FinishedTransfers finished = decode.worker().getFinished(Set.of());
        for (LoadFailure failure : finished.failedLoads()) {
          throw new IllegalStateException("D's load of " + id + " failed: " + failure.reason());
        }
        if (finished.doneReceiving().contains(id)) {
          return System.nanoTime() - start;
        }
        LockSupport.parkNanos(STEP.toNanos());
      }
    }

    /** Where D's copy of the last request differs from P's, if anywhere. */
    private Optional<String> firstDifference(int tokens) {
      for (int block = 0; block < tokens / TOKENS_PER_BLOCK; block++) {
        byte[] ours = prefillRegions.readBlock(block);
        byte[] theirs = decodeRegions.readBlock(block);
        int at = Arrays.mismatch(ours, theirs);
        if (at >= 0) {
          return Optional.of("block " + block + ", byte " + at + " of its image");
        }
      }
      return Optional.empty();
    }

    @Override
    public void close() {
      prefillThread.shutdownNow();
      decode.close();
      prefill.close();
      for (KvMemory m : decodeMemory) {
        m.close();
      }
      for (KvMemory m : prefillMemory) {
        m.close();
      }
    }
  }

  private static KvConnector connector(
      String type,
      String deployment,
      String engine,
      Role role,
      int streamingMinTokens,
      ConnectorObserver observer) {
    return BenchConnectors.create(
        type,
        deployment,
        engine,
        role,
        settings -> settings.streamingMinTokens(streamingMinTokens).observer(observer));
  }

  /** Spends {@code nanos} on the calling thread, as computing would. */
  private static void spend(long nanos) {
    long until = System.nanoTime() + nanos;
    for (long left = nanos; left > 0; left = until - System.nanoTime()) {
      if (left > SPIN_NANOS) {
        LockSupport.parkNanos(left - SPIN_NANOS);
      } else {
        Thread.onSpinWait();
      }
    }
  }

  private TtftRun() {}
}
