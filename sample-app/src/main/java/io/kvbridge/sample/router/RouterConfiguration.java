package io.kvbridge.sample.router;

import io.kvbridge.discovery.etcd.EtcdDiscovery;
import io.kvbridge.events.BlockHashes;
import io.kvbridge.events.EventAuthenticator;
import io.kvbridge.events.PrefixIndex;
import io.kvbridge.sample.SampleProperties;
import io.kvbridge.sample.broker.NatsEvents;
import io.kvbridge.sample.engine.EngineShape;
import io.kvbridge.sample.node.EventAuthentication;
import io.kvbridge.sample.node.NodeKind;
import io.kvbridge.spring.KvBridgeProperties;
import io.kvbridge.spring.events.PrefixIndexStatus;
import io.kvbridge.spring.events.PrefixIndexView;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import tools.jackson.databind.json.JsonMapper;

/**
 * Runs the router in this JVM unless {@code kvbridge.sample.router.enabled=false}: the router, the
 * probing of its nodes' health, and its stats on the {@code info} endpoint. With discovery on etcd
 * ({@code kvbridge.discovery.etcd.endpoints} set) its pools are the nodes registered there, kept
 * current as they come and go ({@link PoolsFromEtcd}), and the configured URLs are not used.
 * Otherwise the pools are the configured URLs; without any, the router calls the nodes on this
 * server, over HTTP like any other client, so the all-in-one deployment takes the same code path as
 * separate processes.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty(name = "kvbridge.sample.router.enabled", matchIfMissing = true)
public class RouterConfiguration {

  /** The longest a router waits before it tries a node's KV events again. */
  static final Duration FEED_RETRY = Duration.ofSeconds(1);

  /** The router. */
  @Bean
  public PdRouter pdRouter(
      SampleProperties properties,
      Environment environment,
      JsonMapper json,
      KvBridgeProperties kvbridge,
      ObjectProvider<EtcdDiscovery> etcd) {
    SampleProperties.Router settings = properties.router();
    NodeClient nodes =
        new NodeClient(
            json, settings.connectTimeout(), settings.readTimeout(), settings.healthTimeout());
    EtcdDiscovery discovery = etcd.getIfAvailable();
    NodePool prefill =
        discovery == null
            ? pool(NodeKind.PREFILL, settings.prefillUrls(), properties, environment)
            : followed(NodeKind.PREFILL, discovery);
    NodePool decode =
        discovery == null
            ? pool(NodeKind.DECODE, settings.decodeUrls(), properties, environment)
            : followed(NodeKind.DECODE, discovery);
    Optional<PrefixRouting> prefixRouting = Optional.empty();
    if (settings.prefixAware()) {
      EngineShape shape = properties.decodeEngine();
      String model = shape.model().model();
      prefixRouting =
          Optional.of(
              new PrefixRouting(
                  new BlockHashes(model, shape.tokensPerBlock()),
                  feeds(
                      new PrefixIndex(model, shape.tokensPerBlock()),
                      properties,
                      json,
                      EventAuthentication.of(kvbridge)),
                  List.of(prefill, decode),
                  settings.healthInterval(),
                  settings.decodeAloneShare()));
    }
    return new PdRouter(
        nodes,
        properties.engine().context(),
        prefill,
        decode,
        new DropAfterPrefill(settings.dropAfterPrefill()),
        prefixRouting);
  }

  /**
   * Where the router's index learns what the nodes hold: NATS when {@code
   * kvbridge.sample.events.nats.url} is set, else each node over HTTP.
   */
  private static EventFeeds feeds(
      PrefixIndex index,
      SampleProperties properties,
      JsonMapper json,
      Optional<EventAuthenticator> auth) {
    SampleProperties.Router settings = properties.router();
    SampleProperties.Nats nats = properties.events().nats();
    if (nats.enabled()) {
      return new NatsEventFeeds(
          index,
          NatsEvents.connect(nats, "kvbridge router events"),
          json,
          settings.connectTimeout(),
          auth);
    }
    return new KvEventFeeds(
        index,
        json,
        settings.connectTimeout(),
        // A node not reachable yet (this server before it has a port) is tried again soon,
        // whatever the health interval.
        Collections.min(List.of(settings.healthInterval(), FEED_RETRY)),
        auth);
  }

  /**
   * Keeps the router's pools equal to the nodes registered in etcd, when discovery on etcd is on;
   * otherwise does nothing.
   */
  @Bean
  public AutoCloseable routerPoolsFromEtcd(
      PdRouter router, SampleProperties properties, ObjectProvider<EtcdDiscovery> etcd) {
    EtcdDiscovery discovery = etcd.getIfAvailable();
    if (discovery == null) {
      return () -> {};
    }
    return PoolsFromEtcd.follow(
        discovery,
        router.prefillPool(),
        router.decodePool(),
        Objects.requireNonNullElse(properties.router().healthPath(), "/actuator/health"));
  }

  private static NodePool followed(NodeKind kind, EtcdDiscovery discovery) {
    return NodePool.followed(
        kind,
        "no "
            + kind.id()
            + " node is registered in etcd at "
            + discovery.settings().endpoints().stream()
                .map(URI::toString)
                .collect(Collectors.joining(","))
            + " under "
            + discovery.settings().enginesPrefix());
  }

  /** Probes the router's nodes every {@code kvbridge.sample.router.health-interval}. */
  @Bean
  public HealthProbing routerHealthProbing(PdRouter router, SampleProperties properties) {
    return new HealthProbing(router, properties.router().healthInterval());
  }

  /** The router's prefix index as meters ({@link PrefixIndexMetrics}), when it keeps one. */
  @Bean
  public PrefixIndexMetrics prefixIndexMetrics(
      PdRouter router, ObjectProvider<MeterRegistry> registry) {
    PrefixIndexMetrics metrics = new PrefixIndexMetrics();
    registry.ifAvailable(meters -> metrics.register(router, meters));
    return metrics;
  }

  /**
   * The router's prefix index on the {@code kvbridge} endpoint and the dashboard, when it keeps
   * one.
   */
  @Bean
  @ConditionalOnBooleanProperty(name = "kvbridge.sample.router.prefix-aware", matchIfMissing = true)
  public PrefixIndexView routerPrefixIndexView(PdRouter router) {
    return () -> {
      RouterStats stats = router.stats();
      PrefixRouting.IndexStats index =
          stats
              .prefixIndex()
              .orElseThrow(() -> new IllegalStateException("the router keeps no prefix index"));
      return PrefixIndexStatus.of(
          index.index(),
          index.refusedBatches(),
          index.unauthenticated(),
          index.unreachable(),
          stats.requests(),
          stats.prefixRouted());
    };
  }

  /** The router's stats on the {@code info} endpoint. */
  @Bean
  public RouterInfoContributor routerInfoContributor(PdRouter router) {
    return new RouterInfoContributor(router);
  }

  private static NodePool pool(
      NodeKind kind, List<URI> urls, SampleProperties properties, Environment environment) {
    String healthPath = properties.router().healthPath();
    if (!urls.isEmpty()) {
      String path = Objects.requireNonNullElse(healthPath, "/actuator/health");
      return new NodePool(kind, urls.stream().map(url -> PooledNode.at(url, path)).toList());
    }
    // This server's health covers both nodes; each node's own is its engine's.
    String path =
        Objects.requireNonNullElse(healthPath, "/actuator/health/" + kind.id() + "Engine");
    String prefix = kind.path(properties);
    PooledNode self =
        new PooledNode(
            prefix + " on this server",
            () -> {
              String port = environment.getProperty("local.server.port");
              if (port == null) {
                throw new IllegalStateException(
                    "the "
                        + kind.id()
                        + " node's URL is not configured and this server has no port yet; set"
                        + " kvbridge.sample.router."
                        + kind.id()
                        + "-urls");
              }
              return URI.create("http://127.0.0.1:" + port + prefix);
            },
            path);
    return new NodePool(kind, List.of(self));
  }
}
