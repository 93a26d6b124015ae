package io.kvbridge.sample.node;

import io.kvbridge.discovery.etcd.EngineAttributes;
import io.kvbridge.discovery.etcd.EngineLoad;
import io.kvbridge.sample.SampleProperties;
import io.kvbridge.sample.engine.EngineStats;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.core.env.Environment;

/**
 * What this JVM's nodes publish in their etcd registrations (when {@code
 * kvbridge.discovery.etcd.endpoints} is set): how many KV blocks each engine has free (its pool's
 * blocks that no request holds; its prefix cache gives blocks back on demand, so they count as
 * free), and where the node is, so a router can build its pools from the registrations: {@value
 * #BASE_URL} ({@code <base_url>/v1/completions}) and {@value #HEALTH_URL} (its engine's health), at
 * {@code kvbridge.sample.advertised-host} and this server's port. Until the server has a port, a
 * registration carries no URL, and routers leave it out.
 *
 * <p>Threads: the discovery thread asks; {@link #started} is called once per node as it starts.
 */
public final class NodeRegistrations implements EngineLoad, EngineAttributes {

  /** The attribute naming the node's base URL. */
  public static final String BASE_URL = "base_url";

  /** The attribute naming the URL of the node's engine's health. */
  public static final String HEALTH_URL = "health_url";

  private final SampleProperties properties;
  private final Environment environment;
  private final Map<String, Node> started = new ConcurrentHashMap<>();

  /** The registrations of the nodes {@code properties} configure, on this server. */
  public NodeRegistrations(SampleProperties properties, Environment environment) {
    this.properties = Objects.requireNonNull(properties, "properties");
    this.environment = Objects.requireNonNull(environment, "environment");
  }

  /** {@code node} has started: its engine's free blocks are published from now on. */
  void started(Node node) {
    started.put(node.engine().engineId(), node);
  }

  @Override
  public OptionalInt freeBlocks(String engineId) {
    Node node = started.get(engineId);
    if (node == null) {
      return OptionalInt.empty();
    }
    EngineStats stats = node.engine().stats();
    return OptionalInt.of(Math.max(0, stats.blockCount() - stats.heldBlocks()));
  }

  @Override
  public Map<String, String> attributes(String engineId) {
    String port = environment.getProperty("local.server.port");
    if (port == null) {
      return Map.of();
    }
    String host = properties.advertisedHost();
    String server = "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    for (NodeKind kind : NodeKind.values()) {
      if (kind.settings(properties).enabled() && kind.engineId(properties).equals(engineId)) {
        return Map.of(
            BASE_URL,
            server + kind.path(properties),
            HEALTH_URL,
            server + "/actuator/health/" + kind.id() + "Engine");
      }
    }
    return Map.of();
  }
}
