package io.kvbridge.sample.router;

import io.kvbridge.discovery.etcd.EngineRecord;
import io.kvbridge.discovery.etcd.EtcdDiscovery;
import io.kvbridge.sample.node.NodeRegistrations;
import io.kvbridge.spi.Role;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a router's pools equal to the nodes registered in etcd: every producer whose registration
 * carries a {@link NodeRegistrations#BASE_URL} is a prefill node, every consumer with one a decode
 * node, each with the load its registration publishes. A node whose key appears joins its pool at
 * once; one whose key vanishes (its process stopped, or died and its etcd lease expired) leaves it
 * at once. A registration without a base URL (an engine that is not a sample node, or one whose
 * server has no port yet) or with one that is not an absolute {@code http} URL is left out.
 *
 * <p>Threads: {@link EtcdDiscovery} calls it on its own thread, one change at a time; {@link
 * #close} from any thread.
 */
public final class PoolsFromEtcd implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(PoolsFromEtcd.class);

  private final NodePool prefill;
  private final NodePool decode;
  private final String defaultHealthPath;
  private final AutoCloseable listening;

  private PoolsFromEtcd(
      EtcdDiscovery discovery, NodePool prefill, NodePool decode, String defaultHealthPath) {
    this.prefill = Objects.requireNonNull(prefill, "prefill");
    this.decode = Objects.requireNonNull(decode, "decode");
    this.defaultHealthPath = Objects.requireNonNull(defaultHealthPath, "defaultHealthPath");
    this.listening = discovery.onEnginesChanged(this::apply);
  }

  /**
   * Fills {@code prefill} and {@code decode} from the engines registered in {@code discovery}, and
   * keeps them current until closed. A registration without a health URL is probed at {@code
   * defaultHealthPath} on its node's server.
   */
  public static PoolsFromEtcd follow(
      EtcdDiscovery discovery, NodePool prefill, NodePool decode, String defaultHealthPath) {
    return new PoolsFromEtcd(discovery, prefill, decode, defaultHealthPath);
  }

  private void apply(Map<String, EngineRecord> engines) {
    Map<PooledNode, NodeLoad> producers = new LinkedHashMap<>();
    Map<PooledNode, NodeLoad> consumers = new LinkedHashMap<>();
    // By engine id, so every router orders a pool alike.
    for (EngineRecord record : new TreeMap<>(engines).values()) {
      if (record.role() == Role.BOTH) {
        continue;
      }
      URI base = url(record, NodeRegistrations.BASE_URL);
      if (base == null) {
        continue;
      }
      URI health = url(record, NodeRegistrations.HEALTH_URL);
      PooledNode node =
          new PooledNode(
              record.engineId() + " at " + base,
              () -> base,
              health == null ? defaultHealthPath : health.toString());
      NodeLoad load =
          new NodeLoad(
              record.freeBlocks(),
              record.role().produces() ? OptionalInt.of(record.liveLeases()) : OptionalInt.empty());
      (record.role().produces() ? producers : consumers).put(node, load);
    }
    prefill.replace(producers);
    decode.replace(consumers);
    LOG.debug("pools from etcd: prefill {}, decode {}", prefill.nodes(), decode.nodes());
  }

  /** Attribute {@code name} of {@code record} as an absolute http(s) URL, or null. */
  private static URI url(EngineRecord record, String name) {
    String value = record.attribute(name).orElse(null);
    if (value == null) {
      return null;
    }
    try {
      URI uri = new URI(value);
      if (("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
          && uri.getHost() != null) {
        return uri;
      }
    } catch (URISyntaxException e) {
      // refused below
    }
    LOG.warn(
        "engine {} registered {} '{}', which is not an absolute http URL; it is not routed to",
        record.engineId(),
        name,
        value);
    return null;
  }

  /** Stops following etcd; the pools keep the nodes they have. */
  @Override
  public void close() {
    try {
      listening.close();
    } catch (Exception e) {
      LOG.warn("could not stop following the nodes registered in etcd", e);
    }
  }
}
