package io.kvbridge.sample;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.layout.KvModel;
import io.kvbridge.sample.engine.ContextWindow;
import io.kvbridge.sample.engine.EngineShape;
import io.kvbridge.sample.engine.ToyModel;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings of the sample deployment, under {@code kvbridge.sample}. By default one JVM runs all
 * three nodes (prefill, decode, router) and the demo; the {@code prefill}, {@code decode} and
 * {@code router} profiles switch all but one off.
 *
 * <p>Every engine's shape comes from {@code kvbridge.sample.engine.*}, except where its node sets
 * its own under {@code kvbridge.sample.<node>.engine.*}: so a prefill node and a decode node may
 * differ in tensor parallelism and block size (one block size a multiple of the other).
 *
 * @param requestTimeout how long a node waits for its engine to finish one request; then it answers
 *     504 and cancels the request
 * @param disconnectCheckInterval how often the nodes and the router check whether the client of a
 *     request in progress closed its connection, to cancel the request
 * @param engine every engine's KV cache, and the model's context
 * @param prefill the prefill node
 * @param decode the decode node
 * @param router the router
 * @param demo the demo workload run at start-up
 * @param events where the nodes publish their KV events and the router reads them
 * @param advertisedHost the host or address other machines reach this server at; the nodes publish
 *     their URLs with it in etcd (when {@code kvbridge.discovery.etcd.endpoints} is set), so set it
 *     on each host of a deployment that spans machines
 */
@ConfigurationProperties("kvbridge.sample")
public record SampleProperties(
    @DefaultValue("30s") Duration requestTimeout,
    @DefaultValue("100ms") Duration disconnectCheckInterval,
    @DefaultValue Engine engine,
    @DefaultValue Node prefill,
    @DefaultValue Node decode,
    @DefaultValue Router router,
    @DefaultValue Demo demo,
    @DefaultValue Events events,
    @DefaultValue("127.0.0.1") String advertisedHost) {

  /** Checks the values that are not checked in a group, and each node's engine. */
  public SampleProperties {
    requirePositive("kvbridge.sample.request-timeout", requestTimeout);
    requirePositive("kvbridge.sample.disconnect-check-interval", disconnectCheckInterval);
    requireHost("kvbridge.sample.advertised-host", advertisedHost);
    EngineShape p = shape("prefill", engine, prefill.engine());
    EngineShape d = shape("decode", engine, decode.engine());
    if (prefill.enabled() && decode.enabled()) {
      int big = Math.max(p.tokensPerBlock(), d.tokensPerBlock());
      int small = Math.min(p.tokensPerBlock(), d.tokensPerBlock());
      if (big % small != 0) {
        throw new IllegalArgumentException(
            tokensPerBlockProperty("prefill", prefill.engine())
                + " ("
                + p.tokensPerBlock()
                + ") and "
                + tokensPerBlockProperty("decode", decode.engine())
                + " ("
                + d.tokensPerBlock()
                + ") must be multiples of one another, or the decode node cannot read the prefill"
                + " node's blocks");
      }
    }
  }

  /**
   * The prefill node's engine: {@code kvbridge.sample.prefill.engine.*} over {@code
   * kvbridge.sample.engine.*}.
   */
  public EngineShape prefillEngine() {
    return shape("prefill", engine, prefill.engine());
  }

  /**
   * The decode node's engine: {@code kvbridge.sample.decode.engine.*} over {@code
   * kvbridge.sample.engine.*}.
   */
  public EngineShape decodeEngine() {
    return shape("decode", engine, decode.engine());
  }

  /**
   * Every engine's KV cache, unless its node sets its own ({@link EngineOverrides}), and the
   * model's context. The model computes with the toy model whatever its shape; its KV has the shape
   * {@code model} names: {@code toy} ({@value ToyModel#LAYERS} layers, K and V, {@value
   * ToyModel#KV_HEADS} KV heads of {@value ToyModel#HEAD_DIM} two-byte elements, {@value
   * ToyModel#BYTES_PER_TOKEN} bytes of KV per token) or a published model's ({@link KvModel}).
   *
   * @param model the KV shape: {@code toy}, or a {@link KvModel} preset ({@code llama-3.1-8b},
   *     {@code llama-3.1-70b}, {@code qwen2.5-7b}, {@code mistral-7b}, {@code deepseek-v3}: its
   *     layers, KV heads, head dimension and element type, at real size: 128 KiB of KV per token
   *     for {@code llama-3.1-8b}, so size {@code block-count} to fit memory)
   * @param blockCount blocks in an engine's pool; each rank holds its share of every block
   * @param tokensPerBlock tokens per block
   * @param tpDegree tensor-parallel ranks per engine, 1, 2, 4 or 8, each holding an equal share of
   *     the KV heads in memory of its own, or, with more ranks than heads, one head that several
   *     ranks hold (replicated KV, as an MLA latent is on every rank)
   * @param prefixCacheBlocks how many blocks an engine's prefix cache keeps at most (least recently
   *     used first out), 0 to {@code block-count}; 0 turns it off. A decode node then loads only
   *     what a prompt does not start with
   * @param memoryOrder how a slab's vectors (the rank's heads of one block's tokens in one layer
   *     and plane) are ordered, {@code head-major} ("HND") or {@code block-major} ("NHD"); engines
   *     of different orders exchange KV vector by vector
   * @param memoryPlacement where a rank's slabs lie: {@code cross-layer} (one region of whole
   *     blocks), {@code per-layer} (a tensor per layer, {@code [2, blocks, ...]}, as vLLM's
   *     FlashAttention backend), {@code per-layer-block-first} (a tensor per layer, {@code [blocks,
   *     2, ...]}, as FlashInfer, or an MLA latent per layer) or {@code per-layer-plane} (a K and a
   *     V tensor per layer); each tensor is registered as a region of its own
   * @param stepInterval how long an idle engine waits between steps
   * @param prefillCost what computing one layer of one prompt token costs an engine (the toy model
   *     itself costs next to nothing), e.g. {@code 2us}: a prompt of {@code n} tokens then takes
   *     {@code n × layers × prefill-cost} to prefill, so that streaming's effect on the time to
   *     first token shows on any machine; {@code 0s} to {@code 10ms}
   * @param maxContextTokens the most prompt tokens plus {@code max_tokens} one request may ask for;
   *     the nodes and the router refuse a request beyond it with 400, so the router's value should
   *     match the nodes'
   */
  public record Engine(
      @DefaultValue(TOY) String model,
      @DefaultValue("4096") int blockCount,
      @DefaultValue("16") int tokensPerBlock,
      @DefaultValue("1") int tpDegree,
      @DefaultValue("512") int prefixCacheBlocks,
      @DefaultValue("head-major") String memoryOrder,
      @DefaultValue("cross-layer") String memoryPlacement,
      @DefaultValue("2ms") Duration stepInterval,
      @DefaultValue("0s") Duration prefillCost,
      @DefaultValue("" + ContextWindow.DEFAULT_TOKENS) int maxContextTokens) {

    /** Checks sizes, the step interval and the context. */
    public Engine {
      kvModel(model);
      requirePositive(ENGINE + "block-count", blockCount);
      requirePositive(ENGINE + "tokens-per-block", tokensPerBlock);
      requireTpDegree(ENGINE + "tp-degree", tpDegree);
      requirePrefixCache(ENGINE + "prefix-cache-blocks", prefixCacheBlocks, blockCount);
      parseOrder(ENGINE, memoryOrder);
      parsePlacement(ENGINE, memoryPlacement);
      requirePositive(ENGINE + "step-interval", stepInterval);
      if (prefillCost == null
          || prefillCost.isNegative()
          || prefillCost.compareTo(MAX_PREFILL_COST) > 0) {
        throw new IllegalArgumentException(
            ENGINE + "prefill-cost must be 0s to 10ms, got " + prefillCost);
      }
      requirePositive(ContextWindow.PROPERTY, maxContextTokens);
    }

    /** The model's context: how many tokens a request's prompt and completion may hold together. */
    public ContextWindow context() {
      return new ContextWindow(maxContextTokens);
    }

    /** The model's whole layout for {@code tokensPerBlock} and {@code blockCount}. */
    KvLayout layout(int tokensPerBlock, int blockCount) {
      return kvModel(model)
          .map(m -> m.layout(tokensPerBlock, blockCount, order()))
          .orElseGet(() -> ToyModel.layout(tokensPerBlock, blockCount, order()))
          .withMemory(order(), placement());
    }

    /** The preset {@code value} names; empty for the toy model's own shape. */
    private static Optional<KvModel> kvModel(@Nullable String value) {
      if (value != null && value.trim().equalsIgnoreCase(TOY)) {
        return Optional.empty();
      }
      Optional<KvModel> preset = value == null ? Optional.empty() : KvModel.preset(value);
      if (preset.isEmpty()) {
        throw new IllegalArgumentException(
            ENGINE
                + "model must be "
                + TOY
                + " or one of "
                + KvModel.presetNames()
                + ", got '"
                + value
                + "'");
      }
      return preset;
    }

    /** The memory order of every engine's slabs, unless a node sets its own. */
    public KvLayout.MemoryOrder order() {
      return parseOrder(ENGINE, memoryOrder);
    }

    /** Where every engine's slabs lie, unless a node sets its own. */
    public KvLayout.Placement placement() {
      return parsePlacement(ENGINE, memoryPlacement);
    }
  }

  /**
   * A node's own engine settings, under {@code kvbridge.sample.<node>.engine}; each one unset takes
   * {@code kvbridge.sample.engine}'s.
   *
   * @param blockCount blocks in the engine's pool
   * @param tokensPerBlock tokens per block; the prefill node's and the decode node's must be
   *     multiples of one another
   * @param tpDegree the engine's tensor-parallel ranks: 1, 2, 4 or 8
   * @param prefixCacheBlocks how many blocks the engine's prefix cache keeps at most; 0 turns it
   *     off
   * @param memoryOrder the order of the engine's slabs, {@code head-major} or {@code block-major}
   * @param memoryPlacement where the engine's slabs lie ({@link Engine#memoryPlacement()}'s values)
   */
  public record EngineOverrides(
      @Nullable Integer blockCount,
      @Nullable Integer tokensPerBlock,
      @Nullable Integer tpDegree,
      @Nullable Integer prefixCacheBlocks,
      @Nullable String memoryOrder,
      @Nullable String memoryPlacement) {}

  /**
   * A prefill or decode node.
   *
   * @param enabled whether this JVM runs the node
   * @param engineId the engine's id in handshakes; unique in the deployment
   * @param path the path prefix of its completions API ({@code <path>/v1/completions}); empty when
   *     the node runs alone
   * @param engine the node's engine, where it differs from {@code kvbridge.sample.engine}
   */
  public record Node(
      @DefaultValue("true") boolean enabled,
      @Nullable String engineId,
      @Nullable String path,
      @DefaultValue EngineOverrides engine) {}

  /**
   * The router: sends each request to a prefill node with {@code max_tokens=1} and remote decode
   * requested, then to a decode node with the prefill node's parameters; each node chosen from its
   * pool among the healthy ones, the one with the fewest of the router's requests in flight.
   *
   * @param enabled whether this JVM runs the router
   * @param prefillUrls the prefill nodes' base URLs ({@code <url>/v1/completions}); empty: this
   *     server at the prefill path
   * @param decodeUrls the decode nodes' base URLs; empty: this server at the decode path
   * @param healthPath the path of each node's health on its server, whose {@code status} must be
   *     {@code UP}; unset: {@code /actuator/health}, or with the nodes on this server the health of
   *     each node's engine, {@code /actuator/health/prefillEngine} and {@code decodeEngine}
   * @param healthInterval how often the router asks every node for its health; two answers in a row
   *     that are not UP (or none) mark a node down, one UP answer brings it back
   * @param healthTimeout how long the router waits for a node's health
   * @param dropAfterPrefill fault injection: the share of requests (0 to 1) the router drops after
   *     prefill without calling the decode node, so that the prefill node's lease must expire; the
   *     demo uses its own share while it runs
   * @param connectTimeout how long the router waits to connect to a node
   * @param readTimeout how long the router waits for a node's answer
   * @param prefixAware whether the router follows its nodes' KV events ({@code docs/events.md}) and
   *     prefers, for each request, the decode nodes whose prefix caches hold the most of its
   *     prompt, unless they are busier than the least busy by more than a few calls
   * @param decodeAloneShare with {@code prefixAware}, the share of a prompt's full blocks (0 to 1)
   *     a decode node's cache must hold for the router to send the request straight to it, without
   *     a prefill node or a lease: the node computes the rest itself; 0 never does
   */
  public record Router(
      @DefaultValue("true") boolean enabled,
      @DefaultValue List<URI> prefillUrls,
      @DefaultValue List<URI> decodeUrls,
      @Nullable String healthPath,
      @DefaultValue("2s") Duration healthInterval,
      @DefaultValue("2s") Duration healthTimeout,
      @DefaultValue("0") double dropAfterPrefill,
      @DefaultValue("2s") Duration connectTimeout,
      @DefaultValue("60s") Duration readTimeout,
      @DefaultValue("true") boolean prefixAware,
      @DefaultValue("0.5") double decodeAloneShare) {

    /** Checks the URLs, the health path, the drop share and the timeouts. */
    public Router {
      prefillUrls = requireNodeUrls("kvbridge.sample.router.prefill-urls", prefillUrls);
      decodeUrls = requireNodeUrls("kvbridge.sample.router.decode-urls", decodeUrls);
      if (healthPath != null && !healthPath.startsWith("/")) {
        throw new IllegalArgumentException(
            "kvbridge.sample.router.health-path must be a path starting with /, got '"
                + healthPath
                + "'");
      }
      requirePositive("kvbridge.sample.router.health-interval", healthInterval);
      requirePositive("kvbridge.sample.router.health-timeout", healthTimeout);
      requireShare("kvbridge.sample.router.drop-after-prefill", dropAfterPrefill);
      requireShare("kvbridge.sample.router.decode-alone-share", decodeAloneShare);
      requirePositive("kvbridge.sample.router.connect-timeout", connectTimeout);
      requirePositive("kvbridge.sample.router.read-timeout", readTimeout);
    }

    private static List<URI> requireNodeUrls(String name, @Nullable List<URI> urls) {
      if (urls == null) {
        return List.of();
      }
      Set<URI> seen = new HashSet<>();
      for (int i = 0; i < urls.size(); i++) {
        URI url = urls.get(i);
        if (url == null
            || url.getHost() == null
            || !("http".equals(url.getScheme()) || "https".equals(url.getScheme()))) {
          throw new IllegalArgumentException(
              name
                  + "["
                  + i
                  + "] must be an absolute http or https URL such as http://10.0.0.5:8100, got '"
                  + url
                  + "'");
        }
        if (!seen.add(url)) {
          throw new IllegalArgumentException(name + " lists " + url + " twice");
        }
      }
      return List.copyOf(urls);
    }
  }

  /**
   * Where KV events travel ({@code docs/events.md}). Every node serves its own over HTTP; with a
   * NATS server set, each node also publishes them to NATS JetStream and the router reads them
   * there, not from the nodes.
   *
   * @param nats the NATS JetStream broker, for fleets
   */
  public record Events(@DefaultValue Nats nats) {}

  /**
   * KV events through NATS JetStream: each batch a message of a stream, each engine's latest
   * snapshot a key of a key-value bucket.
   *
   * @param url the NATS server, e.g. {@code nats://10.0.0.9:4222}; unset: no broker, the router
   *     reads each node's events over HTTP
   * @param stream the JetStream stream of the batches, created if missing
   * @param subject the subject prefix of the batches, {@code <subject>.<engine>}, and of the
   *     requests for a fresh snapshot, {@code <subject>-resync.<engine>}
   * @param bucket the key-value bucket of the snapshots, created if missing
   * @param keptBatches how many of each engine's last batches the stream keeps, so a reader that
   *     starts (a router restarted) replays them after the latest snapshot
   * @param snapshotInterval how often, at most, a node puts a new snapshot while its cache changes;
   *     a reader that finds a gap asks for one at once, and every reader parses every snapshot put,
   *     so this is long
   * @param connectTimeout how long a node or the router waits for the NATS server, at start and on
   *     each reconnection
   */
  public record Nats(
      @Nullable URI url,
      @DefaultValue("KVBRIDGE_KV_EVENTS") String stream,
      @DefaultValue("kvbridge.kv-events") String subject,
      @DefaultValue("kvbridge-kv-snapshots") String bucket,
      @DefaultValue("4096") int keptBatches,
      @DefaultValue("30s") Duration snapshotInterval,
      @DefaultValue("2s") Duration connectTimeout) {

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    private static final Pattern SUBJECT = Pattern.compile("[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*");

    /** Checks the URL, the names and the figures. */
    public Nats {
      if (url != null && !("nats".equals(url.getScheme()) && url.getHost() != null)) {
        throw new IllegalArgumentException(
            "kvbridge.sample.events.nats.url must be a nats:// URL such as nats://10.0.0.9:4222,"
                + " got '"
                + url
                + "'");
      }
      requireName("kvbridge.sample.events.nats.stream", stream, NAME);
      requireName("kvbridge.sample.events.nats.bucket", bucket, NAME);
      if (subject == null || subject.length() > 128 || !SUBJECT.matcher(subject).matches()) {
        throw new IllegalArgumentException(
            "kvbridge.sample.events.nats.subject must be dot-separated tokens of letters, digits,"
                + " - and _, at most 128 characters, got '"
                + subject
                + "'");
      }
      requirePositive("kvbridge.sample.events.nats.kept-batches", keptBatches);
      requirePositive("kvbridge.sample.events.nats.snapshot-interval", snapshotInterval);
      requirePositive("kvbridge.sample.events.nats.connect-timeout", connectTimeout);
    }

    /** Whether the events go through NATS. */
    public boolean enabled() {
      return url != null;
    }

    private static void requireName(String property, @Nullable String value, Pattern pattern) {
      if (value == null || !pattern.matcher(value).matches()) {
        throw new IllegalArgumentException(
            property + " must be 1 to 64 letters, digits, - and _, got '" + value + "'");
      }
    }
  }

  /**
   * The demo workload run once the server is up (all-in-one mode only).
   *
   * @param enabled whether to run it
   * @param requests how many requests to send through the router
   * @param turns the requests are conversations of this many turns (the last one may have fewer),
   *     each turn sent once the one before it is answered, its prompt the previous one extended or
   *     repeated, so the engines' prefix caches find what they served; 1 makes every prompt new
   * @param concurrency how many conversations are in flight at once
   * @param progressEvery print a progress line every this many finished requests
   * @param maxPromptBytes the longest prompt, in bytes (tokens)
   * @param maxTokens the most tokens a request asks for
   * @param dropAfterPrefill the share of requests (0 to 1) the router drops after prefill while the
   *     demo runs (fault injection); the router's own share applies again afterwards
   * @param seed seeds the prompts and lengths, so a run can be repeated
   * @param exitAfter stop the application once the summary is printed (exit code 0 only if every
   *     check passed)
   * @param ttftRequests after the workload, how many prompts of {@code ttftPromptTokens} are sent
   *     each way, one at a time, from the prefill engine to the decode engine: streamed layer by
   *     layer and whole, to print the time to first token of both; 0 for none
   * @param ttftPromptTokens the length of those prompts, at least {@code
   *     kvbridge.streaming.min-tokens} for them to be streamed
   */
  public record Demo(
      @DefaultValue("true") boolean enabled,
      @DefaultValue("200") int requests,
      @DefaultValue("4") int turns,
      @DefaultValue("8") int concurrency,
      @DefaultValue("20") int progressEvery,
      @DefaultValue("1200") int maxPromptBytes,
      @DefaultValue("24") int maxTokens,
      @DefaultValue("0.1") double dropAfterPrefill,
      @DefaultValue("42") long seed,
      @DefaultValue("false") boolean exitAfter,
      @DefaultValue("6") int ttftRequests,
      @DefaultValue("2048") int ttftPromptTokens) {

    /** Checks the counts. */
    public Demo {
      requirePositive("kvbridge.sample.demo.requests", requests);
      requirePositive("kvbridge.sample.demo.turns", turns);
      requirePositive("kvbridge.sample.demo.concurrency", concurrency);
      requirePositive("kvbridge.sample.demo.progress-every", progressEvery);
      requirePositive("kvbridge.sample.demo.max-prompt-bytes", maxPromptBytes);
      requirePositive("kvbridge.sample.demo.max-tokens", maxTokens);
      requireShare("kvbridge.sample.demo.drop-after-prefill", dropAfterPrefill);
      if (ttftRequests < 0) {
        throw new IllegalArgumentException(
            "kvbridge.sample.demo.ttft-requests must be 0 (no comparison) or more, got "
                + ttftRequests);
      }
      requirePositive("kvbridge.sample.demo.ttft-prompt-tokens", ttftPromptTokens);
    }
  }

  private static final String ENGINE = "kvbridge.sample.engine.";

  private static final String TOY = "toy";

  private static final Duration MAX_PREFILL_COST = Duration.ofMillis(10);

  /** The most bytes one region of a rank may hold: the fake connector's region is one buffer. */
  private static final long MAX_REGION_BYTES = Integer.MAX_VALUE;

  /** The engine of node {@code node}, each value checked under the property it comes from. */
  private static EngineShape shape(String node, Engine defaults, EngineOverrides own) {
    String prefix = "kvbridge.sample." + node + ".engine.";
    int blockCount = pick(own.blockCount(), defaults.blockCount());
    String blockCountProperty = (own.blockCount() != null ? prefix : ENGINE) + "block-count";
    requirePositive(blockCountProperty, blockCount);
    int tokensPerBlock = pick(own.tokensPerBlock(), defaults.tokensPerBlock());
    requirePositive(tokensPerBlockProperty(node, own), tokensPerBlock);
    int tpDegree = pick(own.tpDegree(), defaults.tpDegree());
    requireTpDegree((own.tpDegree() != null ? prefix : ENGINE) + "tp-degree", tpDegree);
    int prefixCacheBlocks = pick(own.prefixCacheBlocks(), defaults.prefixCacheBlocks());
    requirePrefixCache(
        own.prefixCacheBlocks() != null
            ? prefix + "prefix-cache-blocks"
            : ENGINE + "prefix-cache-blocks (for " + blockCountProperty + ")",
        prefixCacheBlocks,
        blockCount);
    KvLayout.MemoryOrder order =
        own.memoryOrder() == null ? defaults.order() : parseOrder(prefix, own.memoryOrder());
    KvLayout.Placement placement =
        own.memoryPlacement() == null
            ? defaults.placement()
            : parsePlacement(prefix, own.memoryPlacement());
    KvLayout layout = defaults.layout(tokensPerBlock, blockCount).withMemory(order, placement);
    // A rank holds its share of the heads, or a whole head where several ranks hold it, in one
    // region or one per layer (and plane).
    long regionBytes = layout.forRank(0, tpDegree).regionBytes();
    if (regionBytes > MAX_REGION_BYTES) {
      throw new IllegalArgumentException(
          blockCountProperty
              + " "
              + blockCount
              + " blocks of "
              + tokensPerBlock
              + " tokens of "
              + defaults.model()
              + " need "
              + regionBytes
              + " bytes per region of a rank, more than one region holds ("
              + MAX_REGION_BYTES
              + "); lower it, or place the KV per layer");
    }
    return new EngineShape(layout, tpDegree, prefixCacheBlocks);
  }

  private static KvLayout.MemoryOrder parseOrder(String prefix, @Nullable String value) {
    for (KvLayout.MemoryOrder order : KvLayout.MemoryOrder.values()) {
      if (order.name().replace('_', '-').equalsIgnoreCase(value)) {
        return order;
      }
    }
    throw new IllegalArgumentException(
        prefix + "memory-order must be head-major or block-major, got '" + value + "'");
  }

  private static KvLayout.Placement parsePlacement(String prefix, @Nullable String value) {
    for (KvLayout.Placement placement : KvLayout.Placement.values()) {
      if (placement.name().replace('_', '-').equalsIgnoreCase(value)) {
        return placement;
      }
    }
    throw new IllegalArgumentException(
        prefix
            + "memory-placement must be cross-layer, per-layer, per-layer-block-first or"
            + " per-layer-plane, got '"
            + value
            + "'");
  }

  private static String tokensPerBlockProperty(String node, EngineOverrides own) {
    return (own.tokensPerBlock() != null ? "kvbridge.sample." + node + ".engine." : ENGINE)
        + "tokens-per-block";
  }

  private static int pick(@Nullable Integer own, int shared) {
    return own != null ? own : shared;
  }

  private static void requireTpDegree(String name, int value) {
    if (value != 1 && value != 2 && value != 4 && value != 8) {
      throw new IllegalArgumentException(
          name
              + " must be 1, 2, 4 or 8 (the ranks split the model's KV heads equally, or hold"
              + " each head on several ranks where there are more ranks than heads), got "
              + value);
    }
  }

  private static void requirePrefixCache(String name, int value, int blockCount) {
    if (value < 0 || value > blockCount) {
      throw new IllegalArgumentException(
          name + " must be 0 (off) to the pool's " + blockCount + " blocks, got " + value);
    }
  }

  private static void requireShare(String name, double value) {
    if (!(value >= 0 && value <= 1)) {
      throw new IllegalArgumentException(name + " must be between 0 and 1, got " + value);
    }
  }

  private static void requirePositive(String name, int value) {
    if (value <= 0) {
      throw new IllegalArgumentException(name + " must be positive, got " + value);
    }
  }

  private static void requirePositive(String name, Duration value) {
    if (value == null || value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " must be a positive duration, got " + value);
    }
  }

  private static void requireHost(String property, String host) {
    boolean valid;
    try {
      String bracketed = host.contains(":") ? "[" + host + "]" : host;
      URI uri = new URI("http://" + bracketed + ":1/");
      valid = !host.isBlank() && host.equals(uri.getHost().replaceAll("^\\[|\\]$", ""));
    } catch (URISyntaxException | RuntimeException e) {
      valid = false;
    }
    if (!valid) {
      throw new IllegalArgumentException(
          property + " must be a host name or an IP address, got '" + host + "'");
    }
  }
}
