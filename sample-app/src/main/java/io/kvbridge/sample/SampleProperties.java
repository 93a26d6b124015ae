package io.kvbridge.sample;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.sample.engine.ContextWindow;
import io.kvbridge.sample.engine.ToyModel;
import java.net.URI;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings of the sample deployment, under {@code kvbridge.sample}. By default one JVM runs all
 * three nodes (prefill, decode, router) and the demo; the {@code prefill}, {@code decode} and
 * {@code router} profiles switch all but one off.
 *
 * @param model the model name reported in answers
 * @param requestTimeout how long a node waits for its engine to finish one request; then it answers
 *     504 and cancels the request
 * @param disconnectCheckInterval how often the nodes and the router check whether the client of a
 *     request in progress closed its connection, to cancel the request
 * @param engine the toy engine's KV cache
 * @param prefill the prefill node
 * @param decode the decode node
 * @param router the router
 * @param demo the demo workload run at start-up
 */
@ConfigurationProperties("kvbridge.sample")
public record SampleProperties(
    @DefaultValue("kvbridge-toy") String model,
    @DefaultValue("30s") Duration requestTimeout,
    @DefaultValue("100ms") Duration disconnectCheckInterval,
    @DefaultValue Engine engine,
    @DefaultValue Node prefill,
    @DefaultValue Node decode,
    @DefaultValue Router router,
    @DefaultValue Demo demo) {

  /** Checks the values that are not checked in a group. */
  public SampleProperties {
    requirePositive("kvbridge.sample.request-timeout", requestTimeout);
    requirePositive("kvbridge.sample.disconnect-check-interval", disconnectCheckInterval);
  }

  /**
   * The toy engine's KV cache and the model's context.
   *
   * @param blockCount blocks in each engine's pool
   * @param tokensPerBlock tokens per block
   * @param bytesPerToken bytes of KV per token
   * @param stepInterval how long an idle engine waits between steps
   * @param maxContextTokens the most prompt tokens plus {@code max_tokens} one request may ask for;
   *     the nodes and the router refuse a request beyond it with 400, so the router's value should
   *     match the nodes'
   */
  public record Engine(
      @DefaultValue("4096") int blockCount,
      @DefaultValue("16") int tokensPerBlock,
      @DefaultValue("64") int bytesPerToken,
      @DefaultValue("2ms") Duration stepInterval,
      @DefaultValue("" + ContextWindow.DEFAULT_TOKENS) int maxContextTokens) {

    /** Checks sizes, the step interval and the context. */
    public Engine {
      requirePositive("kvbridge.sample.engine.block-count", blockCount);
      requirePositive("kvbridge.sample.engine.tokens-per-block", tokensPerBlock);
      requirePositive("kvbridge.sample.engine.bytes-per-token", bytesPerToken);
      requirePositive("kvbridge.sample.engine.step-interval", stepInterval);
      requirePositive(ContextWindow.PROPERTY, maxContextTokens);
    }

    /** The model's context: how many tokens a request's prompt and completion may hold together. */
    public ContextWindow context() {
      return new ContextWindow(maxContextTokens);
    }

    /** The KV layout: two engines exchange blocks only if theirs agree. */
    public KvLayout layout() {
      return KvLayout.opaque(
          ToyModel.NAME + ", " + bytesPerToken + " bytes per token",
          tokensPerBlock,
          bytesPerToken,
          blockCount);
    }
  }

  /**
   * A prefill or decode node.
   *
   * @param enabled whether this JVM runs the node
   * @param engineId the engine's id in handshakes; unique in the deployment
   * @param path the path prefix of its completions API ({@code <path>/v1/completions}); empty when
   *     the node runs alone
   */
  public record Node(
      @DefaultValue("true") boolean enabled, @Nullable String engineId, @Nullable String path) {}

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
      @DefaultValue("60s") Duration readTimeout) {

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
   * The demo workload run once the server is up (all-in-one mode only).
   *
   * @param enabled whether to run it
   * @param requests how many requests to send through the router
   * @param concurrency how many requests are in flight at once
   * @param progressEvery print a progress line every this many finished requests
   * @param maxPromptBytes the longest prompt, in bytes (tokens)
   * @param maxTokens the most tokens a request asks for
   * @param dropAfterPrefill the share of requests (0 to 1) the router drops after prefill while the
   *     demo runs (fault injection); the router's own share applies again afterwards
   * @param seed seeds the prompts and lengths, so a run can be repeated
   * @param exitAfter stop the application once the summary is printed (exit code 0 only if every
   *     check passed)
   */
  public record Demo(
      @DefaultValue("true") boolean enabled,
      @DefaultValue("200") int requests,
      @DefaultValue("8") int concurrency,
      @DefaultValue("20") int progressEvery,
      @DefaultValue("1200") int maxPromptBytes,
      @DefaultValue("24") int maxTokens,
      @DefaultValue("0.1") double dropAfterPrefill,
      @DefaultValue("42") long seed,
      @DefaultValue("false") boolean exitAfter) {

    /** Checks the counts. */
    public Demo {
      requirePositive("kvbridge.sample.demo.requests", requests);
      requirePositive("kvbridge.sample.demo.concurrency", concurrency);
      requirePositive("kvbridge.sample.demo.progress-every", progressEvery);
      requirePositive("kvbridge.sample.demo.max-prompt-bytes", maxPromptBytes);
      requirePositive("kvbridge.sample.demo.max-tokens", maxTokens);
      requireShare("kvbridge.sample.demo.drop-after-prefill", dropAfterPrefill);
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
}
